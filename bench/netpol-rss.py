#!/usr/bin/env python3
# What --network-policy adds to flanneld's memory (issue 35): the API stand-in (bench NetpolWorld) holds PODS pods
# over 10 nodes (a tenth on this node, n1), 20 namespaces and POLICIES policies; flanneld (bin/flanneld, kube mode,
# vxlan) runs in a throwaway network namespace against it, ROUNDS times without --network-policy and with it,
# interleaved. Without: RSS SETTLE s after subnet.env is written. With: RSS SETTLE s after /policy says the first
# listing is in and the table is loaded. One line per run, then the medians and their difference.
#
#   bench/netpol-rss.py [PODS POLICIES [ROUNDS]]      default 10000 1000 3;  SETTLE=10 (seconds)
#   FLANNELD_JAVA_OPTS=... reaches bin/flanneld; DIAG=1 prints the live heap's biggest classes (jcmd) after each run
#
# Needs root; builds the bench jar (mvn -Pbench) if missing. Everything in namespace jfnpr<pid>, removed on exit.
import json, os, statistics, subprocess, sys, time, urllib.request
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PODS = int(sys.argv[1]) if len(sys.argv) > 1 else 10000
POLICIES = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
ROUNDS = int(sys.argv[3]) if len(sys.argv) > 3 else 3
SETTLE = float(os.environ.get("SETTLE", "10"))
NS = "jfnpr%d" % os.getpid()
D = "/tmp/netpol-rss-" + NS
X = ["ip", "netns", "exec", NS]
JAR = os.path.join(ROOT, "bench", "target", "benchmarks.jar")

def sh(*cmd, check=True):
    r = subprocess.run(list(cmd), capture_output=True, text=True)
    if check and r.returncode != 0:
        raise SystemExit("failed: %s\n%s%s" % (" ".join(cmd), r.stdout[-2000:], r.stderr[-2000:]))
    return r.stdout

def rss_mb(pid):
    return int(sh("ps", "-o", "rss=", "-p", str(pid)).strip() or 0) / 1024

def get(url):
    try:
        return urllib.request.urlopen(url, timeout=2).read().decode()
    except OSError:
        return None

if os.geteuid() != 0:
    raise SystemExit("netpol-rss: needs root")
if not os.path.exists(JAR):
    subprocess.run(["mvn", "-B", "-ntp", "-q", "-Pbench", "-pl", "bench", "-am", "package", "-DskipTests"], cwd=ROOT, check=True)
os.makedirs(D, exist_ok=True)
cpu = next(l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name"))
print("# cpu: %s; %d cpus; load1 %s; commit %s; pods=%d policies=%d settle=%ss" % (cpu, os.cpu_count(),
      open("/proc/loadavg").read().split()[0], sh("git", "-C", ROOT, "log", "-1", "--format=%h").strip(), PODS, POLICIES, SETTLE))
sh("ip", "netns", "add", NS)
api = None
try:
    for c in (["ip", "link", "set", "lo", "up"], ["ip", "link", "add", "ext0", "type", "veth", "peer", "name", "ext0p"],
              ["ip", "link", "set", "ext0p", "up"], ["ip", "link", "set", "ext0", "up"],
              ["ip", "addr", "add", "192.0.2.10/24", "dev", "ext0"], ["ip", "route", "add", "default", "via", "192.0.2.1"]):
        sh(*X, *c)
    api = subprocess.Popen(X + ["java", "-Xmx2g", "-cp", JAR, "org.jflannel.bench.netpol.NetpolWorld", "6443", str(PODS), str(POLICIES)],
                           stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=open(D + "/api.log", "w"), text=True)
    line = api.stdout.readline()
    if not line.startswith("ready"):
        raise SystemExit("netpol-rss: the API stand-in did not start: " + line + open(D + "/api.log").read()[-2000:])
    print("# " + line.strip())
    open(D + "/net-conf.json", "w").write('{"Network":"10.0.0.0/8","Backend":{"Type":"vxlan"}}')
    results = {"off": [], "on": []}
    for r in range(ROUNDS):
        for variant in (("off", "on") if r % 2 == 0 else ("on", "off")):
            env = dict(os.environ, NODE_NAME="n1")
            args = [os.path.join(ROOT, "bin", "flanneld"), "--kube-subnet-mgr", "--kube-api-url=http://127.0.0.1:6443",
                    "--net-config-path=" + D + "/net-conf.json", "--subnet-file=" + D + "/subnet.env", "--healthz-port=10767",
                    "--healthz-ip=127.0.0.1"]
            if variant == "on":
                args.append("--network-policy")
            if os.path.exists(D + "/subnet.env"):
                os.remove(D + "/subnet.env")
            start = time.time()
            f = subprocess.Popen(X + args, stderr=open("%s/flanneld-%s-%d.log" % (D, variant, r), "w"), env=env)
            ready = None
            while time.time() - start < 180 and f.poll() is None:
                if variant == "off" and os.path.exists(D + "/subnet.env"):
                    ready = time.time() - start
                    break
                if variant == "on":
                    doc = sh(*X, "curl", "-sf", "--max-time", "2", "http://127.0.0.1:10767/policy", check=False)
                    if doc:
                        d = json.loads(doc)
                        if d.get("listed") and d.get("loads", 0) > 0:
                            ready = time.time() - start
                            chains, pods = d["isolatedChains"], d["localPods"]
                            break
                time.sleep(0.2)
            if ready is None:
                raise SystemExit("netpol-rss: flanneld (%s) not ready within 180 s; log: %s" % (variant, D))
            time.sleep(SETTLE)
            rss = rss_mb(f.pid)  # ip netns exec and bin/flanneld both exec: f.pid is the JVM
            if os.environ.get("DIAG"):  # the live heap after a full collection, and its biggest classes
                hist = sh("jcmd", str(f.pid), "GC.class_histogram", check=False)
                print("\n".join(hist.splitlines()[:25]) + "\n" + hist.strip().splitlines()[-1])
                print(sh("jcmd", str(f.pid), "GC.heap_info", check=False))
            f.terminate()
            rc = f.wait(30)
            results[variant].append(rss)
            extra = " localPods=%d isolatedChains=%d" % (pods, chains) if variant == "on" else ""
            print("netpol-rss variant=%s round=%d ready_s=%.1f rss_mb=%.1f exit=%d load1=%s%s" % (variant, r, ready, rss, rc,
                  open("/proc/loadavg").read().split()[0], extra), flush=True)
            sh(*X, "ip", "link", "del", "flannel.1", check=False)
            sh(*X, "nft", "delete", "table", "inet", "jflannel-netpol", check=False)
    off, on = statistics.median(results["off"]), statistics.median(results["on"])
    print("netpol-rss median off=%.1f MB on=%.1f MB added=%.1f MB (pods=%d policies=%d)" % (off, on, on - off, PODS, POLICIES))
finally:
    if api is not None:
        api.stdin.close()
        api.wait(30)
    sh("ip", "netns", "del", NS, check=False)
    if not os.environ.get("KEEP_LOGS"):
        sh("rm", "-rf", D, check=False)
