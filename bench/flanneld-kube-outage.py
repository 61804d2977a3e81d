#!/usr/bin/env python3
# Usage (root): bench/flanneld-kube-outage.py
#   env PEERS=100       peer Nodes present before the daemon starts
#   env OUTAGE_S=30     how long the API server is down each run
#   env JOIN_AT_S=5     seconds into the outage at which a new Node is added (through the server's second front,
#                       as through another API server replica: the daemon cannot see it before the outage ends)
#   env RUNS=3          outages, one after the other, against the same running daemon
#   env KEEP_LOGS=1     keep the run directory
#
# Kube mode, issue 23: "a Node added during an API server outage is programmed <= 2 s after the server returns".
# The test-support mock API server as a process (KubeApiServerMain: fabric8's store behind a front that behaves
# like a real API server; its line protocol on stdin plays the controller manager), bin/flanneld in kube mode
# (VXLAN) in a throwaway namespace. Per run: the server stops serving (connections dropped, store kept), the
# kernel's entries on flannel.1 are sampled throughout (nothing may go), a Node is created JOIN_AT_S in, the server
# serves again after OUTAGE_S; reported: seconds from the server's answer to "resume-serving" until the new Node's
# route is on flannel.1 (written last, after its neighbour and FDB entry). A measurement, not an assertion.
"""Kube-mode outage benchmark: a Node added while the API server is down, programmed after it returns."""
import json, os, queue, random, signal, subprocess, sys, threading, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PEERS = int(os.environ.get("PEERS", "100"))
OUTAGE_S = float(os.environ.get("OUTAGE_S", "30"))
JOIN_AT_S = float(os.environ.get("JOIN_AT_S", "5"))
RUNS = int(os.environ.get("RUNS", "3"))
NS = "jfko%05d" % random.randint(0, 99999)
D = "/tmp/jflannel-bench-" + NS
X = ["ip", "netns", "exec", NS]
P = "flannel.alpha.coreos.com/"
procs = []


def sh(*cmd, check=True):
    r = subprocess.run(list(cmd), capture_output=True, text=True, timeout=300)
    if check and r.returncode != 0:
        raise SystemExit("failed: %s\n%s%s" % (" ".join(cmd), r.stdout[-2000:], r.stderr[-2000:]))
    return r.stdout


def load():
    return open("/proc/loadavg").read().split()[0]


def ghost(i):
    """A peer Node annotated as a vxlan flannel node: subnet 10.(i/256).(i%256).0/24, TEST-NET-2 public IP."""
    cidr = "10.%d.%d.0/24" % divmod(i, 256)
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-%d" % i, "annotations": {
        P + "kube-subnet-manager": "true", P + "backend-type": "vxlan", P + "public-ip": "198.18.%d.%d" % (i // 250, i % 250 + 1),
        P + "backend-data": json.dumps({"VNI": 1, "VtepMAC": "0e:00:00:%02x:%02x:%02x" % ((i >> 16) & 255, (i >> 8) & 255, i & 255)},
                                       separators=(",", ":"))}},
        "spec": {"podCIDR": cidr, "podCIDRs": [cidr]}}


class Api:
    """KubeApiServerMain: one request line, one answer line."""

    def __init__(self, cp):
        self.p = subprocess.Popen(X + ["java", "-Xmx512m", "-cp", cp, "org.jflannel.testsupport.cluster.KubeApiServerMain",
                                       "127.0.0.1", "6443"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  stderr=open(D + "/api.log", "w"), text=True, start_new_session=True)
        procs.append(self.p)
        # the server's libraries log to stdout too: drained all the time, or a full pipe would stall the server
        self.lines = queue.Queue()
        threading.Thread(target=self.drain, daemon=True).start()
        line = self.answer(("ready ",))
        if not line.startswith("ready "):
            raise SystemExit("API server did not start: %r, see %s/api.log" % (line, D))

    def drain(self):
        with open(D + "/api.out", "w") as out:
            for line in self.p.stdout:
                if line.startswith(("ready ", "ok", "err")):
                    self.lines.put(line)
                else:
                    out.write(line)
        self.lines.put("")

    def answer(self, starts):
        """The next protocol line, within 60 s."""
        try:
            line = self.lines.get(timeout=60)
        except queue.Empty:
            return ""
        return line.strip()

    def call(self, line):
        self.p.stdin.write(line + "\n")
        self.p.stdin.flush()
        answer = self.answer(("ok", "err"))
        if not answer.startswith("ok"):
            raise SystemExit("API server: %s -> %s" % (line[:80], answer[:300]))
        return answer


def routes():
    return sh(*X, "ip", "route", "show", "dev", "flannel.1", check=False).count("onlink")


def routed(cidr):
    return "onlink" in sh(*X, "ip", "route", "show", cidr, check=False)


def main():
    if os.geteuid() != 0:
        raise SystemExit("needs root")
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(143))
    signal.signal(signal.SIGALRM, lambda *a: sys.exit("bench: overall time limit reached"))
    signal.alarm(int(os.environ.get("LIMIT_S", "900")))
    os.makedirs(D, exist_ok=True)
    print("# %d cpus, kernel %s; netns %s; load1 at start %s; commit %s" % (
        os.cpu_count(), os.uname().release, NS, load(),
        sh("git", "-C", ROOT, "log", "-1", "--format=%h", check=False).strip()), flush=True)
    try:
        # the class path of test-support's mock server (flanneld's test scope), offline
        subprocess.run(["mvn", "-B", "-q", "-o", "-pl", "flanneld", "-am", "test-compile", "dependency:build-classpath",
                        "-Dmdep.outputFile=target/cp-outage.txt", "-Dmdep.includeScope=test"], cwd=ROOT, check=True)
        cp = open(os.path.join(ROOT, "flanneld", "target", "cp-outage.txt")).read().strip()
        cp += ":" + os.path.join(ROOT, "test-support", "target", "classes")
        sh("ip", "netns", "add", NS)
        for c in (["ip", "link", "set", "lo", "up"], ["ip", "link", "add", "ext0", "type", "veth", "peer", "name", "ext0p"],
                  ["ip", "link", "set", "ext0p", "up"], ["ip", "link", "set", "ext0", "up"],
                  ["ip", "addr", "add", "192.0.2.10/24", "dev", "ext0"], ["ip", "route", "add", "default", "via", "192.0.2.1"]):
            sh(*X, *c)
        api = Api(cp)
        api.call("create-node node-0 10.255.0.0/24 192.0.2.10")
        for i in range(1, PEERS + 1):
            api.call("create-node-json " + json.dumps(ghost(i)))
        open(D + "/net-conf.json", "w").write('{"Network":"10.0.0.0/8","Backend":{"Type":"vxlan"}}')
        log = open(D + "/flanneld.log", "w")
        f = subprocess.Popen(X + [os.path.join(ROOT, "bin", "flanneld"), "--kube-subnet-mgr",
                                  "--kube-api-url=http://127.0.0.1:6443", "--iface=ext0",
                                  "--net-config-path=" + D + "/net-conf.json", "--subnet-file=" + D + "/subnet.env"],
                             stdout=log, stderr=subprocess.STDOUT, env=dict(os.environ, NODE_NAME="node-0"),
                             start_new_session=True)
        procs.append(f)
        end = time.time() + 120
        while routes() < PEERS and time.time() < end and f.poll() is None:
            time.sleep(0.05)
        if routes() < PEERS:
            raise SystemExit("the daemon did not program %d peers, log %s/flanneld.log" % (PEERS, D))
        print("# %d peers programmed; load1 %s" % (PEERS, load()), flush=True)
        time.sleep(3)
        for run in range(1, RUNS + 1):
            new = PEERS + run
            cidr = "10.%d.%d.0/24" % divmod(new, 256)
            have = routes()
            api.call("stop-serving")
            down = time.time()
            low, joined = have, False
            while time.time() - down < OUTAGE_S:
                if not joined and time.time() - down >= JOIN_AT_S:
                    api.call("create-node-json " + json.dumps(ghost(new)))
                    joined = True
                low = min(low, routes())
                time.sleep(0.2)
            api.call("resume-serving")
            up = time.time()
            t_prog = None
            while time.time() - up < 60:
                if routed(cidr):
                    t_prog = time.time()
                    break
                time.sleep(0.02)
            print("kube-outage peers=%d outage_s=%.0f join_at_s=%.0f run=%d programmed_after_return_s=%s "
                  "routes_before=%d min_routes_during=%d load1=%s"
                  % (PEERS, OUTAGE_S, JOIN_AT_S, run, ("%.2f" % (t_prog - up)) if t_prog else "TIMEOUT(60)",
                     have, low, load()), flush=True)
            time.sleep(2)
    finally:
        for p in reversed(procs):
            if p.poll() is None:
                if p.stdin:
                    p.stdin.close()
                else:
                    p.send_signal(signal.SIGTERM)
                try:
                    p.wait(20)
                except subprocess.TimeoutExpired:
                    p.kill()
        subprocess.run(["ip", "netns", "del", NS], capture_output=True)
        if not os.environ.get("KEEP_LOGS"):
            subprocess.run(["rm", "-rf", D])


if __name__ == "__main__":
    main()
