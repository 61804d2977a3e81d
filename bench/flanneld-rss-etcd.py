#!/usr/bin/env python3
# Usage (root): N=2000 bench/flanneld-rss-etcd.py [label[@LAUNCHER]=JVM-OPTIONS ...]
# Prints one line per option set: routes programmed, seconds from process start until all N peers'
# routes are on flannel.1, and the daemon's RSS 5 s later. Everything runs in a throwaway netns.
"""Ad-hoc: N etcd leases, flanneld (bin/flanneld) in a throwaway netns; convergence time and RSS per JVM option set."""
import os, random, subprocess, sys, time, concurrent.futures as cf
N = int(os.environ.get("N", "2000"))
NS = "fdb%d" % random.randint(10000, 99999)
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
# the launcher: bin/flanneld, or e.g. bench/image-flanneld (the image's, inside an unpacked image)
FLANNELD = os.environ.get("FLANNELD") or os.path.join(ROOT, "bin", "flanneld")
D = "/tmp/flanneld-bench/" + NS
os.makedirs(D, exist_ok=True)
X = ["ip", "netns", "exec", NS]
def sh(*cmd, check=True):
    return subprocess.run(list(cmd), check=check, capture_output=True, text=True).stdout
procs = []
sh("ip", "netns", "add", NS)
try:
    for c in (["ip","link","set","lo","up"], ["ip","link","add","ext0","type","veth","peer","name","ext0p"],
              ["ip","link","set","ext0p","up"], ["ip","link","set","ext0","up"], ["ip","addr","add","192.0.2.10/24","dev","ext0"],
              ["ip","route","add","default","via","192.0.2.1"]):
        sh(*X, *c)
    etcd = subprocess.Popen(X + ["etcd", "--data-dir", D + "/etcd", "--listen-client-urls", "http://127.0.0.1:2379",
                            "--advertise-client-urls", "http://127.0.0.1:2379"], stdout=open(D + "/etcd.log", "w"), stderr=subprocess.STDOUT)
    procs.append(etcd)
    for _ in range(100):
        if subprocess.run(X + ["etcdctl", "endpoint", "health"], capture_output=True).returncode == 0: break
        time.sleep(0.3)
    sh(*X, "etcdctl", "put", "/coreos.com/network/config", '{"Network":"10.0.0.0/8","SubnetLen":24,"Backend":{"Type":"vxlan"}}')
    def put(i):
        a, b = divmod(i + 1, 256)
        v = '{"PublicIP":"198.18.%d.%d","PublicIPv6":null,"BackendType":"vxlan","BackendData":{"VNI":1,"VtepMAC":"0e:00:00:%02x:%02x:%02x"}}' % (
            i // 250, i % 250 + 1, (i >> 16) & 255, (i >> 8) & 255, i & 255)
        sh(*X, "etcdctl", "put", "/coreos.com/network/subnets/10.%d.%d.0-24" % (a, b), v)
    with cf.ThreadPoolExecutor(16) as ex:
        list(ex.map(put, range(N)))
    print("leases:", sh(*X, "etcdctl", "get", "--prefix", "--keys-only", "/coreos.com/network/subnets").count("subnets"))
    for label, opts, envx in [(a.split("=",1)[0], a.split("=",1)[1], {}) for a in sys.argv[1:]] or [("default", "", {})]:
        # label@LAUNCHER=opts: this option set runs another launcher (e.g. upstream's flanneld, another image's)
        label, _, launcher = label.partition("@")
        launcher = launcher or FLANNELD
        env = dict(os.environ, FLANNELD_JAVA_OPTS=opts.replace("MALLOC2", ""))
        if "MALLOC2" in opts: env["MALLOC_ARENA_MAX"] = "2"
        start = time.time()
        f = subprocess.Popen(X + [launcher, "--etcd-endpoints=http://127.0.0.1:2379",
                              "--subnet-file=" + D + "/subnet.env"], stderr=open(D + "/flanneld-%s.log" % label, "w"), env=env)
        n = 0
        while time.time() - start < 60:
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
            print(sh("sh", "-c", "pmap -x %d | sort -k3 -n | tail -12" % f.pid, check=False))
        if os.environ.get("HISTO"):  # threads by name, the heap's top classes, RSS after a full GC
            names = [l.split('"')[1] for l in sh("jcmd", str(f.pid), "Thread.print", check=False).splitlines() if l.startswith('"')]
            print("threads=%d %s" % (len(names), sorted(names)))
            hist = sh("jcmd", str(f.pid), "GC.class_histogram", check=False)
            print(hist[:int(os.environ["HISTO"])] + "\n" + hist.strip().splitlines()[-1])
            time.sleep(2)
            print("rss after the histogram's full GC: %.1f MB" % (int(sh("ps", "-o", "rss=", "-p", str(f.pid)).strip() or 0) / 1024))
        f.terminate(); rc = f.wait(20)
        print("%-10s routes=%d converged_s=%.2f rss_mb=%.1f exit=%d opts=%s" % (label, n, t, rss / 1024, rc, opts))
        sh(*X, "ip", "link", "del", "flannel.1", check=False)
finally:
    for p in procs:
        p.terminate(); p.wait(10)
    sh("ip", "netns", "del", NS, check=False)
