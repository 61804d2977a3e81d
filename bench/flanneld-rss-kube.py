#!/usr/bin/env python3
# Usage (root): N=2000 bench/flanneld-rss-kube.py [label[@LAUNCHER]=JVM-OPTIONS ...]
# Prints one line per option set: routes programmed, seconds from process start until all N peers'
# routes are on flannel.1, and the daemon's RSS 5 s later. Everything runs in a throwaway netns.
"""Ad-hoc: N peer Nodes in fabric8's mock API server, flanneld (bin/flanneld, kube mode) in a throwaway netns."""
import json, os, random, subprocess, sys, time
N = int(os.environ.get("N", "2000"))
NS = "fdk%d" % random.randint(10000, 99999)
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# the launcher: bin/flanneld, or e.g. bench/image-flanneld (the image's, inside an unpacked image)
FLANNELD = os.environ.get("FLANNELD") or os.path.join(ROOT, "bin", "flanneld")
D = "/tmp/flanneld-bench/" + NS
os.makedirs(D, exist_ok=True)
X = ["ip", "netns", "exec", NS]
def sh(*cmd, check=True):
    r = subprocess.run(list(cmd), capture_output=True, text=True)
    if check and r.returncode != 0:
        raise SystemExit("failed: %s\n%s%s" % (" ".join(cmd), r.stdout[-2000:], r.stderr[-2000:]))
    return r.stdout
procs = []
sh("ip", "netns", "add", NS)
try:
    for c in (["ip","link","set","lo","up"], ["ip","link","add","ext0","type","veth","peer","name","ext0p"],
              ["ip","link","set","ext0p","up"], ["ip","link","set","ext0","up"], ["ip","addr","add","192.0.2.10/24","dev","ext0"],
              ["ip","route","add","default","via","192.0.2.1"]):
        sh(*X, *c)
    # the test class path of flanneld (test-support's mock server and its dependencies)
    subprocess.run(["mvn", "-B", "-q", "-pl", "flanneld", "-am", "test-compile", "dependency:build-classpath",
                    "-Dmdep.outputFile=target/cp.txt", "-Dmdep.includeScope=test"], cwd=ROOT, check=True)
    cp = open(os.path.join(ROOT, "flanneld", "target", "cp.txt")).read().strip()
    api = subprocess.Popen(X + ["java", "-Xmx1g", "-cp", cp, "org.jflannel.testsupport.kube.KubeMockServer", "6443"],
                           stdin=subprocess.PIPE, stdout=open(D + "/api.out", "w"), stderr=open(D + "/api.log", "w"), text=True)
    procs.append(api)
    for _ in range(300):
        if "url=" in open(D + "/api.out").read(): break
        time.sleep(0.1)
    P = "flannel.alpha.coreos.com/"
    items = [{"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-0"}, "spec": {"podCIDR": "10.0.0.0/24", "podCIDRs": ["10.0.0.0/24"]}}]
    for i in range(1, N + 1):
        a, b = divmod(i, 256)
        cidr = "10.%d.%d.0/24" % (a, b)
        items.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "node-%d" % i, "annotations": {
            P + "kube-subnet-manager": "true", P + "backend-type": "vxlan", P + "public-ip": "198.18.%d.%d" % (i // 250, i % 250 + 1),
            P + "backend-data": json.dumps({"VNI": 1, "VtepMAC": "0e:00:00:%02x:%02x:%02x" % ((i >> 16) & 255, (i >> 8) & 255, i & 255)}, separators=(",", ":"))}},
            "spec": {"podCIDR": cidr, "podCIDRs": [cidr]}})
    json.dump({"apiVersion": "v1", "kind": "List", "items": items}, open(D + "/nodes.json", "w"))
    t0 = time.time()
    print(sh(*X, "python3", os.path.join(ROOT, "bench", "flanneld-post-nodes.py"), D + "/nodes.json").strip())
    print("nodes created in %.1f s" % (time.time() - t0))
    open(D + "/net-conf.json", "w").write('{"Network":"10.0.0.0/8","Backend":{"Type":"vxlan"}}')
    for label, opts in [(a.split("=", 1)[0], a.split("=", 1)[1]) for a in sys.argv[1:]] or [("default", "")]:
        # label@LAUNCHER=opts: this option set runs another launcher (e.g. upstream's flanneld, another image's)
        label, _, launcher = label.partition("@")
        launcher = launcher or FLANNELD
        env = dict(os.environ, FLANNELD_JAVA_OPTS=opts, NODE_NAME="node-0")
        start = time.time()
        f = subprocess.Popen(X + [launcher, "--kube-subnet-mgr", "--kube-api-url=http://127.0.0.1:6443",
                              "--net-config-path=" + D + "/net-conf.json", "--subnet-file=" + D + "/subnet.env"],
                             stderr=open(D + "/flanneld-%s.log" % label, "w"), env=env)
        n = 0
        while time.time() - start < 120:
            n = sh(*X, "ip", "route", "show", "dev", "flannel.1", check=False).count("onlink")
            if n >= N: break
            time.sleep(0.05)
        t = time.time() - start
        time.sleep(float(os.environ.get("SETTLE", "5")))  # RSS this long after convergence
        rss = int(sh("ps", "-o", "rss=", "-p", str(f.pid)).strip() or 0)
        if os.environ.get("SMAPS"):  # RSS by mapping: heap and malloc, the CDS archive, libjvm, the modules file
            print(sh(os.environ["SMAPS"], str(f.pid), check=False))
        if os.environ.get("DIAG"):
            print(sh("jcmd", str(f.pid), "VM.native_memory", "summary", check=False))
            print(sh("jcmd", str(f.pid), "GC.heap_info", check=False))
            if os.environ.get("DUMP"):
                sh("jcmd", str(f.pid), "GC.heap_dump", os.environ["DUMP"], check=False)
            hist = sh("jcmd", str(f.pid), "GC.class_histogram", check=False)
            print(hist[:3000] + "\n" + hist.strip().splitlines()[-1])
            print(sh("jcmd", str(f.pid), "GC.heap_info", check=False))
            time.sleep(2)
            print("rss after the histogram's full GC: %.1f MB" % (int(sh("ps", "-o", "rss=", "-p", str(f.pid)).strip() or 0) / 1024))
        f.terminate(); rc = f.wait(20)
        print("%-10s routes=%d converged_s=%.2f rss_mb=%.1f exit=%d load1=%s opts=%s" % (label, n, t, rss / 1024, rc,
              open("/proc/loadavg").read().split()[0], opts))
        sh(*X, "ip", "link", "del", "flannel.1", check=False)
finally:
    for p in procs:
        p.stdin.close(); p.wait(20)
    sh("ip", "netns", "del", NS, check=False)
    if not os.environ.get("KEEP_LOGS"):
        sh("rm", "-rf", D, check=False)
