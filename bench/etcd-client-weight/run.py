#!/usr/bin/env python3
# Usage (root): JFLANNEL_IMAGE_ROOTFS=DIR N=2000 bench/etcd-client-weight/run.py none jetcd:3 gateway ...
# Issue 19: what the etcd client stack costs in RSS, and what etcd's v3 JSON gateway on java.net.http would
# cost instead. EtcdClientWeight (this directory) lists N leases, parses them with Jackson and watches
# the prefix: "jetcd:K" over K jetcd clients (the daemon opens 3), "gateway" over /v3/kv/range and
# /v3/watch, "none" the JVM with Jackson and nothing else. Each runs in the unpacked image (DIR, e.g. from
# umoci unpack) with its runtime, jars and the daemon's JVM flags (no class-data archive), in a throwaway
# netns with a real etcd; prints the RSS 6 s after the listing (and, CLASSES=1, classes and threads).
import os, random, subprocess, sys, time, concurrent.futures as cf
HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CLS = "/tmp/etcd-client-weight-classes"  # under /tmp: the chroot sees the host's /tmp
os.makedirs(CLS, exist_ok=True)
subprocess.run(["javac", "--release", "17", "-cp", os.path.join(ROOT, "flanneld", "target", "lib", "*"), "-d", CLS,
                os.path.join(HERE, "EtcdClientWeight.java")], check=True)
subprocess.run(["cp", os.path.join(HERE, "logback.xml"), CLS], check=True)
N = int(os.environ.get("N", "2000")); NS = "fcw%d" % random.randint(10000, 99999)
R = os.environ["JFLANNEL_IMAGE_ROOTFS"]; D = "/tmp/flanneld-bench/" + NS; os.makedirs(D, exist_ok=True)
X = ["ip", "netns", "exec", NS]
def sh(*c, check=True): return subprocess.run(list(c), check=check, capture_output=True, text=True).stdout
FLAGS = ("-XX:+UseSerialGC -Xms8m -Xmx64m -Xmn2m -XX:MinHeapFreeRatio=10 -XX:MaxHeapFreeRatio=30 -XX:ReservedCodeCacheSize=24m "
         "-XX:TieredStopAtLevel=1 -XX:CICompilerCount=1 -XX:Tier3InvocationThreshold=2000 -XX:Tier3MinInvocationThreshold=1000 "
         "-XX:Tier3CompileThreshold=20000 -XX:Tier3BackEdgeThreshold=600000 -Xss512k -Dio.netty.allocator.type=unpooled "
         "-Dio.netty.jfr.enabled=false -XX:TrimNativeHeapInterval=1000 --enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow")
procs = []; sh("ip", "netns", "add", NS)
try:
    sh(*X, "ip", "link", "set", "lo", "up")
    etcd = subprocess.Popen(X + ["etcd", "--data-dir", D + "/etcd", "--listen-client-urls", "http://127.0.0.1:2379",
                            "--advertise-client-urls", "http://127.0.0.1:2379"], stdout=open(D + "/etcd.log", "w"), stderr=subprocess.STDOUT)
    procs.append(etcd)
    for _ in range(100):
        if subprocess.run(X + ["etcdctl", "endpoint", "health"], capture_output=True).returncode == 0: break
        time.sleep(0.3)
    def put(i):
        a, b = divmod(i + 1, 256)
        v = '{"PublicIP":"198.18.%d.%d","PublicIPv6":null,"BackendType":"vxlan","BackendData":{"VNI":1,"VtepMAC":"0e:00:00:%02x:%02x:%02x"}}' % (
            i // 250, i % 250 + 1, (i >> 16) & 255, (i >> 8) & 255, i & 255)
        sh(*X, "etcdctl", "put", "/coreos.com/network/subnets/10.%d.%d.0-24" % (a, b), v)
    with cf.ThreadPoolExecutor(16) as ex: list(ex.map(put, range(N)))
    for variant in sys.argv[1:]:
        cmd = X + ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c",
                   'r=$1; shift; mount -t proc proc "$r/proc"; mount --rbind /dev "$r/dev"; mount --rbind /tmp "$r/tmp"; exec chroot "$r" "$@"',
                   "sh", R, "/opt/jflannel/jre/bin/java"] + FLAGS.split() + ["-cp", CLS + ":/opt/jflannel/app/lib/*",
                   "EtcdClientWeight"] + variant.split(":")
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=open(D + "/w.log", "a"), text=True)
        line = p.stdout.readline().strip()
        while line and not line.startswith("ready"): line = p.stdout.readline().strip()
        time.sleep(6)
        rss = int(sh("ps", "-o", "rss=", "-p", str(p.pid)).strip() or 0)
        if os.environ.get("SMAPS"): print(sh(os.environ["SMAPS"], str(p.pid), check=False))
        if os.environ.get("CLASSES"):
            print(sh("sh", "-c", "jcmd %d VM.classes | wc -l; jcmd %d Thread.print | grep -c '^\"'" % (p.pid, p.pid), check=False))
        p.terminate(); p.wait(20)
        print("%-10s %s rss_mb=%.1f load1=%s" % (variant, line, rss / 1024, open("/proc/loadavg").read().split()[0]))
finally:
    for p in procs: p.terminate(); p.wait(10)
    sh("ip", "netns", "del", NS, check=False)
