#!/usr/bin/env python3
# Run it plain or under `nice -n -10`, NOT under `chrt -f` (SCHED_FIFO): two jetcd pool threads of the
# daemon once spun for 5 minutes at real-time priority, starving the machine (docs/benchmarks.md).
# Usage (root): bench/flanneld-start.py [RUNS]      (default 5 runs of each kind)
#   env FLANNELD_JAVA_OPTS=...  passed on to bin/flanneld
#   env FLANNELD=$PWD/bench/image-flanneld JFLANNEL_IMAGE_ROOTFS=DIR   the image's launcher inside an unpacked image
#
# Start to subnet.env: time from the exec of bin/flanneld (etcd mode, VXLAN, a real etcd holding the
# config and 3 peer leases, all in a throwaway network namespace) until subnet.env exists. Two kinds,
# interleaved: "fresh" (no own lease in etcd, no flannel.1: acquires a lease and creates the device)
# and "restart" (own lease and device left from the previous run, as after a daemon restart).
# Also `bin/flanneld --version` (JVM start + flag parsing only) as the floor. APPCDS=1 adds the same
# runs with the optional application class-data archive of docs/configuration.md, built first in the
# run directory (kinds fresh-appcds, restart-appcds). One line per run, then
# medians. Bounded in time; namespace, processes and files removed on exit.
"""Whole-system benchmark: flanneld exec → subnet.env written."""
import ctypes, os, random, signal, statistics, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# the launcher: bin/flanneld, or e.g. bench/image-flanneld (the image's, inside an unpacked image)
FLANNELD = os.environ.get("FLANNELD") or os.path.join(ROOT, "bin", "flanneld")
RUNS = int(sys.argv[1]) if len(sys.argv) > 1 else 5
NS = "jfst%05d" % random.randint(0, 99999)
D = "/tmp/jflannel-bench-" + NS
X = ["ip", "netns", "exec", NS]
EP = "http://127.0.0.1:2379"
procs = []


def sh(*cmd, check=True):
    r = subprocess.run(list(cmd), capture_output=True, text=True, timeout=60)
    if check and r.returncode != 0:
        raise SystemExit("failed: %s\n%s%s" % (" ".join(cmd), r.stdout[-2000:], r.stderr[-2000:]))
    return r.stdout


def load():
    return open("/proc/loadavg").read().split()[0]


def etcdctl(*args):
    return sh(*X, "etcdctl", "--endpoints=" + EP, *args)


def setup():
    os.makedirs(D, exist_ok=True)
    sh("ip", "netns", "add", NS)
    for c in (["ip", "link", "set", "lo", "up"], ["ip", "link", "add", "ext0", "type", "veth", "peer", "name", "ext0p"],
              ["ip", "link", "set", "ext0p", "up"], ["ip", "addr", "add", "192.0.2.10/24", "dev", "ext0"],
              ["ip", "link", "set", "ext0", "up"], ["ip", "route", "add", "default", "via", "192.0.2.1"]):
        sh(*X, *c)
    procs.append(subprocess.Popen(X + ["etcd", "--data-dir", D + "/etcd", "--listen-client-urls", EP,
                                       "--advertise-client-urls", EP, "--listen-peer-urls", "http://127.0.0.1:2380"],
                                  stdout=open(D + "/etcd.log", "w"), stderr=subprocess.STDOUT, start_new_session=True))
    for _ in range(150):
        if subprocess.run(X + ["etcdctl", "--endpoints=" + EP, "endpoint", "health"], capture_output=True).returncode == 0:
            break
        time.sleep(0.2)
    etcdctl("put", "/coreos.com/network/config", '{"Network":"10.0.0.0/8","SubnetLen":24,"Backend":{"Type":"vxlan"}}')
    for i in range(1, 4):
        etcdctl("put", "/coreos.com/network/subnets/10.0.%d.0-24" % i,
                '{"PublicIP":"198.18.0.%d","PublicIPv6":null,"BackendType":"vxlan",'
                '"BackendData":{"VNI":1,"VtepMAC":"0e:00:00:00:00:%02x"}}' % (i, i))


def forget_own_lease():
    """Back to a fresh node: no own lease in etcd (any lease with our public IP), no flannel.1."""
    out = etcdctl("get", "--prefix", "/coreos.com/network/subnets/")
    lines = out.splitlines()
    for k, v in zip(lines[0::2], lines[1::2]):
        if '"PublicIP":"192.0.2.10"' in v:
            etcdctl("del", k)
    sh(*X, "ip", "link", "del", "flannel.1", check=False)


def one(kind, run, opts=""):
    if os.path.exists(D + "/subnet.env"):
        os.remove(D + "/subnet.env")
    if kind.startswith("fresh"):
        forget_own_lease()
    log = open("%s/flanneld-%s-%d.log" % (D, kind, run), "w")
    t0 = time.time()
    p = subprocess.Popen(X + [FLANNELD, "--etcd-endpoints=" + EP, "--iface=ext0",
                              "--subnet-file=" + D + "/subnet.env"], stdout=log, stderr=subprocess.STDOUT,
                         start_new_session=True, env=dict(os.environ, FLANNELD_JAVA_OPTS=(os.environ.get("FLANNELD_JAVA_OPTS", "") + " " + opts).strip()))
    procs.append(p)
    t = None
    end = t0 + 60
    while time.time() < end and p.poll() is None:
        if os.path.exists(D + "/subnet.env"):
            t = time.time() - t0
            break
        time.sleep(0.002)
    p.send_signal(signal.SIGTERM)
    try:
        p.wait(20)
    except subprocess.TimeoutExpired:
        p.kill(); p.wait(10)
    procs.remove(p)
    print("start kind=%s run=%d subnet_env_s=%s exit=%d load1=%s"
          % (kind, run, ("%.3f" % t) if t is not None else "TIMEOUT/EXITED", p.returncode, load()), flush=True)
    return t


def version(run):
    t0 = time.time()
    subprocess.run([FLANNELD, "--version"], capture_output=True, timeout=60)
    t = time.time() - t0
    print("start kind=version run=%d seconds=%.3f load1=%s" % (run, t, load()), flush=True)
    return t


def build_appcds():
    """docs/configuration.md's recipe: a class list from one real run (lambda proxies left out), then -Xshare:dump."""
    one("classlist", 0, "-XX:DumpLoadedClassList=" + D + "/flanneld.classlist")
    with open(D + "/flanneld.classlist") as f, open(D + "/flanneld.classlist2", "w") as g:
        g.writelines(l for l in f if "@lambda" not in l)
    jar = [os.path.join(ROOT, "flanneld", "target", n) for n in os.listdir(os.path.join(ROOT, "flanneld", "target"))
           if n.startswith("flanneld-") and n.endswith(".jar") and "sources" not in n and "tests" not in n][0]
    sh("java", "-Xshare:dump", "-XX:SharedClassListFile=" + D + "/flanneld.classlist2",
       "-XX:SharedArchiveFile=" + D + "/flanneld.jsa", "-cp", jar)
    return "-XX:SharedArchiveFile=" + D + "/flanneld.jsa"


def cleanup():
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(15)
            except subprocess.TimeoutExpired:
                p.kill()
    subprocess.run(["ip", "netns", "del", NS], capture_output=True)
    if not os.environ.get("KEEP_LOGS"):
        subprocess.run(["rm", "-rf", D])


def main():
    if os.geteuid() != 0:
        raise SystemExit("needs root")
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(143))
    signal.signal(signal.SIGALRM, lambda *a: sys.exit("bench: overall time limit reached"))
    signal.alarm(600)
    jv = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()[0]
    print("# machine: %d cpus, kernel %s, %s; netns %s; load1 at start %s" % (os.cpu_count(), os.uname().release, jv, NS, load()))
    print("# commit %s" % sh("git", "-C", ROOT, "log", "-1", "--format=%h %s", check=False).strip(), flush=True)
    res = {"fresh": [], "restart": [], "version": []}
    try:
        setup()
        kinds = [("fresh", ""), ("restart", "")]
        if os.environ.get("APPCDS"):
            cds = build_appcds()
            kinds += [("fresh-appcds", cds), ("restart-appcds", cds)]
            res.update({"fresh-appcds": [], "restart-appcds": []})
        for r in range(1, RUNS + 1):
            res["version"].append(version(r))
            for kind, opts in kinds:
                t = one(kind, r, opts)
                if t is not None:
                    res[kind].append(t)
    finally:
        cleanup()
    print("start summary " + " ".join("%s_median_s=%.3f %s_min_s=%.3f %s_max_s=%.3f" % (
        k, statistics.median(v), k, min(v), k, max(v)) for k, v in res.items() if v))


if __name__ == "__main__":
    main()
