#!/usr/bin/env python3
# Run it plain or under `nice -n -10`, NOT under `chrt -f` (SCHED_FIFO): two jetcd pool threads of the
# daemon once spun for 5 minutes at real-time priority, starving the machine (docs/benchmarks.md).
# Usage (root): bench/flanneld-convergence.py [N ...]        (default: 500 2000 10000)
#   env GROW=2000 GROW_AT=2000   leases added while flanneld runs, after the start at N=GROW_AT (GROW=0: skip)
#   env RUNS=1      repetitions per N
#   env FLANNELD_JAVA_OPTS=...  passed on to bin/flanneld
#   env LATE_S=70   diagnostic: RSS, thread count and the CPU seconds spent idling (reconciles, probes) LATE_S seconds
#                   after the first sample
#   env THREADS=1   the daemon's CPU seconds per thread (grouped by name) at convergence: where the cold path's CPU went
#   env DIAG=1      heap, class histogram and (with -XX:NativeMemoryTracking=summary) NMT after convergence
#   env VARIANTS="JFLANNEL_ROUTE_NEXTHOPS=0;JFLANNEL_ROUTE_NEXTHOPS=1"   A/B in one invocation: each run starts the
#                   daemon once per variant (its VAR=VALUE pairs, space-separated, added to the daemon's environment),
#                   the order rotating every run; result lines carry variant=...; FLANNELD_BIN=PATH in a variant runs
#                   that launcher instead of bin/flanneld (e.g. a copy of another build's bin/ and flanneld/target/);
#                   "|" in a value stands for a space (FLANNELD_JAVA_OPTS=-XX:MinHeapFreeRatio=20|-XX:MaxHeapFreeRatio=40)
#
# Convergence of the real daemon (bin/flanneld, etcd mode, VXLAN) in a throwaway network namespace:
# N leases written upstream's way into a real etcd (each key under its own 24 h etcd lease, upstream's
# JSON value; Network 10.0.0.0/8, SubnetLen 24), then flanneld started; the time from its exec until
# the kernel holds all N peers' neighbour + FDB + route on flannel.1 (counted with `ip`/`bridge`, an
# independent witness), and VmRSS of the daemon 5 s later. At N=2000 (if GROW>0) it then writes GROW
# more leases while the daemon runs and times from the last put's acknowledgement until all are
# programmed. One result line per measurement. Everything is bounded in time and removed on exit.
"""Whole-system convergence benchmark: flanneld (etcd mode) with N leases present / added while running."""
import base64, concurrent.futures as cf, http.client, json, os, random, re, signal, statistics, subprocess, sys, threading, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SIZES = [int(a) for a in sys.argv[1:]] or [500, 2000, 10000]
GROW = int(os.environ.get("GROW", "2000"))
GROW_AT = int(os.environ.get("GROW_AT", "2000"))
RUNS = int(os.environ.get("RUNS", "1"))
NS = "jfcv%05d" % random.randint(0, 99999)
D = "/tmp/jflannel-bench-" + NS
PORT = 2379
PREFIX = "/coreos.com/network"
X = ["ip", "netns", "exec", NS]
procs = []
VARIANTS = [v.strip() for v in os.environ.get("VARIANTS", "").split(";") if v.strip()] or [""]
variant = ""  # the one the next start_flanneld uses


def variant_env():
    env = dict(os.environ)
    env.pop("VARIANTS", None)
    for kv in variant.split():
        k, _, v = kv.partition("=")
        env[k] = v.replace("|", " ")  # FLANNELD_JAVA_OPTS=-Xa|-Xb: several options in one variant
    return env


def variant_tag():
    return (" variant=" + variant.replace(" ", ",")) if variant else ""


def variants_for(run):
    """All variants, rotated by the run number: A B, then B A, ... (interleaved A/B)."""
    k = (run - 1) % len(VARIANTS)
    return VARIANTS[k:] + VARIANTS[:k]


def sh(*cmd, check=True):
    r = subprocess.run(list(cmd), capture_output=True, text=True, timeout=120)
    if check and r.returncode != 0:
        raise SystemExit("failed: %s\n%s%s" % (" ".join(cmd), r.stdout[-2000:], r.stderr[-2000:]))
    return r.stdout


def smaps_by_kind(pid):
    """Resident kB per kind of mapping (file name, [heap], [stack], anonymous), largest first: one line."""
    kinds, cur = {}, "anon"
    for line in open("/proc/%d/smaps" % pid):
        f = line.split()
        if re.match(r"^[0-9a-f]+-[0-9a-f]+ ", line):
            cur = os.path.basename(f[5]) if len(f) > 5 else "anon"
        elif f[0] == "Rss:":
            kinds[cur] = kinds.get(cur, 0) + int(f[1])
    top = sorted(kinds.items(), key=lambda kv: -kv[1])[:12]
    return "smaps rss_kb " + " ".join("%s=%d" % kv for kv in top)


def load():
    return open("/proc/loadavg").read().split()[0]


def b64(s):
    return base64.b64encode(s.encode()).decode()


class Etcd:
    """etcd v3 through its JSON gateway over one keep-alive HTTP connection per thread (setup only)."""
    local = threading.local()

    def call(self, path, body):
        c = getattr(self.local, "c", None)
        if c is None:
            c = self.local.c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=30)
        try:
            c.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
            r = c.getresponse()
            data = r.read()
        except (OSError, http.client.HTTPException):
            c.close()
            self.local.c = None
            raise
        if r.status != 200:
            raise RuntimeError("etcd %s: %d %s" % (path, r.status, data[:300]))
        return json.loads(data)

    def put(self, key, value, lease=None):
        body = {"key": b64(key), "value": b64(value)}
        if lease:
            body["lease"] = lease
        return self.call("/v3/kv/put", body)

    def grant(self, ttl):
        return self.call("/v3/lease/grant", {"TTL": ttl})["ID"]

    def delete_prefix(self, prefix):
        end = prefix[:-1] + chr(ord(prefix[-1]) + 1)
        return int(self.call("/v3/kv/deleterange", {"key": b64(prefix), "range_end": b64(end)}).get("deleted", 0))


etcd = Etcd()


def lease_of(i):
    """Peer i (0-based): subnet 10.a.b.0/24 (10.0.0.0/24 left free), an upstream-format VXLAN lease value."""
    a, b = divmod(i + 1, 256)
    key = "%s/subnets/10.%d.%d.0-24" % (PREFIX, a, b)
    value = ('{"PublicIP":"198.18.%d.%d","PublicIPv6":null,"BackendType":"vxlan",'
             '"BackendData":{"VNI":1,"VtepMAC":"0e:00:00:%02x:%02x:%02x"}}'
             % (i // 250, i % 250 + 1, (i >> 16) & 255, (i >> 8) & 255, i & 255))
    return key, value


def own_subnet_key():
    """The daemon's own lease (from subnet.env), which the writer must never overwrite."""
    try:
        for line in open(D + "/subnet.env"):
            if line.startswith("FLANNEL_SUBNET="):
                ip = line.split("=", 1)[1].split("/")[0].split(".")
                return "%s/subnets/%s.%s.%s.0-24" % (PREFIX, ip[0], ip[1], ip[2])
    except OSError:
        pass
    return None


def write_leases(lo, hi):
    """Leases lo..hi-1 (one more if one of them is the daemon's own subnet), each put under its own 24 h
    etcd lease as upstream does; returns (t_first, t_last_ack, count)."""
    own = own_subnet_key()
    idx = [i for i in range(lo, hi + 1) if lease_of(i)[0] != own][:hi - lo]

    def one(i):
        key, value = lease_of(i)
        etcd.put(key, value, etcd.grant(86400))
        return time.time()
    t0 = time.time()
    with cf.ThreadPoolExecutor(16) as ex:
        acks = list(ex.map(one, idx))
    return t0, max(acks)


def counts():
    routes = sh("ip", "-n", NS, "route", "show", "dev", "flannel.1", check=False).count("onlink")
    return routes


def full_counts():
    routes = counts()
    neigh = sh("ip", "-n", NS, "neigh", "show", "dev", "flannel.1", "nud", "permanent", check=False).count("lladdr")
    fdb = sh("bridge", "-n", NS, "fdb", "show", "dev", "flannel.1", check=False).count(" dst ")
    return routes, neigh, fdb


def await_programmed(n, limit_s):
    """Polls until n routes and then n neighbours and FDB entries are on flannel.1; returns (time, counts)."""
    end = time.time() + limit_s
    while time.time() < end:
        if counts() >= n:
            c = full_counts()
            if min(c) >= n:
                return time.time(), c
        time.sleep(0.02)
    return None, full_counts()


def cpu_s(pid):
    """The process's user + system CPU seconds so far (all threads): under load the wall times stretch, this less."""
    try:
        f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
        return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, IndexError, ValueError):
        return 0.0


def thread_cpu(pid):
    """CPU seconds per thread name (numbered names grouped) so far, largest first: one line."""
    groups = {}
    for t in os.listdir("/proc/%d/task" % pid):
        try:
            name = open("/proc/%d/task/%s/comm" % (pid, t)).read().strip()
            f = open("/proc/%d/task/%s/stat" % (pid, t)).read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        k = re.sub(r"[-#]?[0-9]+$", "", name)
        groups[k] = groups.get(k, 0) + (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")
    return "thread_cpu_s " + " ".join("%s=%.2f" % kv for kv in sorted(groups.items(), key=lambda kv: -kv[1]) if kv[1] > 0)


def rss_mb(pid):
    for line in open("/proc/%d/status" % pid):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def start_flanneld(tag):
    log = open("%s/flanneld-%s.log" % (D, tag), "w")
    t = time.time()
    env = variant_env()
    launcher = env.pop("FLANNELD_BIN", "") or os.path.join(ROOT, "bin", "flanneld")
    p = subprocess.Popen(X + [launcher, "--etcd-endpoints=http://127.0.0.1:%d" % PORT,
                              "--iface=ext0", "--subnet-file=" + D + "/subnet.env"],
                         stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    procs.append(p)
    return p, t


def java_pid(p):
    """bin/flanneld execs java, but `ip netns exec` stays the parent: find the JVM below it."""
    for _ in range(100):
        kids = sh("pgrep", "-P", str(p.pid), check=False).split()
        if kids:
            return int(kids[0])
        if sh("ps", "-o", "comm=", "-p", str(p.pid), check=False).strip() == "java":
            return p.pid
        time.sleep(0.05)
    return p.pid


def stop(p):
    if p.poll() is None:
        p.send_signal(signal.SIGTERM)
        try:
            p.wait(20)
        except subprocess.TimeoutExpired:
            p.kill(); p.wait(10)
    procs.remove(p)
    return p.returncode


def snapshot_line(tag):
    """From the daemon's log: subnet.env written → full listing received → snapshot programmed (its own timer)."""
    log = open("%s/flanneld-%s.log" % (D, tag)).read()
    m = re.findall(r"lease snapshot programmed leases=(\d+) seconds=([0-9.]+)", log)

    def ts(pattern):
        x = re.search(r"^\S+T(\d+):(\d+):([0-9.]+)Z .*" + pattern, log, re.M)
        return int(x.group(1)) * 3600 + int(x.group(2)) * 60 + float(x.group(3)) if x else None
    env, listed = ts("subnet.env written"), ts(r"etcd leases listed prefix=\S+/subnets leases=")
    gap = ("%.2f" % (listed - env)) if env is not None and listed is not None else "?"
    return "env_to_listed_s=%s snapshot_programmed_s=%s" % (gap, m[-1][1] if m else "?")


def one_run(n, run):
    etcd.delete_prefix(PREFIX + "/subnets/")
    sh("ip", "-n", NS, "link", "del", "flannel.1", check=False)
    if os.path.exists(D + "/subnet.env"):
        os.remove(D + "/subnet.env")
    t_w0 = time.time()
    write_leases(0, n)
    print("# %d leases written in %.1f s" % (n, time.time() - t_w0), flush=True)
    time.sleep(1)  # let etcd settle (fsync of the last batch) before the clock starts
    tag = "%d-%d%s" % (n, run, "-v%d" % VARIANTS.index(variant) if variant else "")
    p, t0 = start_flanneld(tag)
    limit = 30 + n / 100
    t_env = None
    t_done, c = None, (0, 0, 0)
    end = time.time() + limit
    while time.time() < end and t_done is None:
        if t_env is None and os.path.exists(D + "/subnet.env"):
            t_env = time.time()
        if counts() >= n:
            c = full_counts()
            if min(c) >= n:
                t_done = time.time()
                break
        if p.poll() is not None:
            break
        time.sleep(0.02)
    if t_done is None:
        c = full_counts()
    jp = java_pid(p)
    cpu_now = cpu_s(jp) if p.poll() is None else 0
    rss_now = rss_mb(jp) if p.poll() is None else 0
    if os.environ.get("THREADS") and p.poll() is None:
        print(thread_cpu(jp) + variant_tag(), flush=True)
    time.sleep(5)
    rss = rss_mb(jp) if p.poll() is None else 0
    if os.environ.get("DIAG") and p.poll() is None:
        names = [open("/proc/%d/task/%s/comm" % (jp, t)).read().strip() for t in os.listdir("/proc/%d/task" % jp)]
        groups = {}
        for nm in names:
            k = re.sub(r"[-#]?[0-9]+$", "", nm)
            groups[k] = groups.get(k, 0) + 1
        print("threads=%d %s" % (len(names), " ".join("%s:%d" % kv for kv in sorted(groups.items(), key=lambda kv: -kv[1]))))
        print(sh("jcmd", str(jp), "GC.heap_info", check=False))
        print(sh("jcmd", str(jp), "VM.native_memory", "summary", check=False))  # needs -XX:NativeMemoryTracking=summary
        print("\n".join(sh("jcmd", str(jp), "GC.class_histogram", check=False).splitlines()[:25]))
        print(smaps_by_kind(jp))
        print("rss_mb_after_histogram_full_gc=%.1f" % rss_mb(jp))
    conv = ("%.2f" % (t_done - t0)) if t_done else (
        "TIMEOUT(%ds)" % limit if p.poll() is None else "EXITED(%d, log %s/flanneld-%s.log)" % (p.returncode, D, tag))
    env_s = ("%.2f" % (t_env - t0)) if t_env else "?"
    print("convergence mode=etcd leases=%d run=%d converged_s=%s subnet_env_s=%s %s routes=%d neigh=%d fdb=%d "
          "rss_mb_at_converged=%.1f rss_mb_5s_later=%.1f cpu_s_at_converged=%.2f load1=%s%s"
          % (n, run, conv, env_s, snapshot_line(tag), c[0], c[1], c[2], rss_now, rss, cpu_now, load(), variant_tag()),
          flush=True)
    if os.environ.get("LATE_S") and p.poll() is None:  # diagnostic: RSS, threads and CPU again after idling
        cpu_late0 = cpu_s(jp)
        time.sleep(float(os.environ["LATE_S"]))
        print("late mode=etcd leases=%d after_converged_s=%.0f rss_mb=%.1f threads=%d idle_cpu_s=%.2f (over the last %s s)%s"
              % (n, time.time() - (t_done or t0), rss_mb(jp), len(os.listdir("/proc/%d/task" % jp)),
                 cpu_s(jp) - cpu_late0, os.environ["LATE_S"], variant_tag()), flush=True)
    if GROW and n == GROW_AT and t_done and run == 1:
        grow(p, jp, n)
    rc = stop(p)
    if rc not in (0, -15, 143):
        print("# flanneld exit code %d, log %s/flanneld-%s.log" % (rc, D, tag), flush=True)


def grow(p, jp, n):
    cpu0 = cpu_s(jp)
    t_first, t_last = write_leases(n, n + GROW)
    t_done, c = await_programmed(n + GROW, 60)
    cpu = cpu_s(jp) - cpu0
    after = ("%.3f" % (t_done - t_last)) if t_done else "TIMEOUT"
    total = ("%.3f" % (t_done - t_first)) if t_done else "TIMEOUT"
    time.sleep(5)
    print("grow mode=etcd leases=%d+%d puts_s=%.2f programmed_after_last_put_s=%s programmed_after_first_put_s=%s "
          "routes=%d neigh=%d fdb=%d rss_mb_5s_later=%.1f cpu_s_during=%.2f load1=%s%s"
          % (n, GROW, t_last - t_first, after, total, c[0], c[1], c[2], rss_mb(jp), cpu, load(), variant_tag()), flush=True)


def enter_netns():
    """setns(2) into NS before any thread exists; threads and children started later inherit it."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open("/run/netns/" + NS, os.O_RDONLY)
    if libc.setns(fd, 0x40000000) != 0:  # CLONE_NEWNET
        raise OSError(ctypes.get_errno(), "setns " + NS)
    os.close(fd)


def setup():
    os.makedirs(D, exist_ok=True)
    sh("ip", "netns", "add", NS)
    enter_netns()  # this process (and every thread it starts later) talks to etcd on the namespace's loopback
    for c in (["ip", "link", "set", "lo", "up"], ["ip", "link", "add", "ext0", "type", "veth", "peer", "name", "ext0p"],
              ["ip", "link", "set", "ext0p", "up"], ["ip", "addr", "add", "192.0.2.10/24", "dev", "ext0"],
              ["ip", "link", "set", "ext0", "up"], ["ip", "route", "add", "default", "via", "192.0.2.1"]):
        sh(*X, *c)
    e = subprocess.Popen(X + ["etcd", "--data-dir", D + "/etcd",
                              "--listen-client-urls", "http://127.0.0.1:%d" % PORT,
                              "--advertise-client-urls", "http://127.0.0.1:%d" % PORT,
                              "--listen-peer-urls", "http://127.0.0.1:2380",
                              "--quota-backend-bytes", str(2 * 1024 ** 3)],
                         stdout=open(D + "/etcd.log", "w"), stderr=subprocess.STDOUT, start_new_session=True)
    procs.append(e)
    for _ in range(100):
        try:
            etcd.put(PREFIX + "/config", '{"Network":"10.0.0.0/8","SubnetLen":24,"Backend":{"Type":"vxlan"}}')
            return
        except (OSError, http.client.HTTPException):
            time.sleep(0.2)
    raise SystemExit("etcd did not come up, see " + D + "/etcd.log")


def cleanup(*_):
    for p in list(procs):
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(15)
            except subprocess.TimeoutExpired:
                p.kill()
    procs.clear()
    subprocess.run(["ip", "netns", "del", NS], capture_output=True)
    if not os.environ.get("KEEP_LOGS"):
        subprocess.run(["rm", "-rf", D])


def main():
    if os.geteuid() != 0:
        raise SystemExit("needs root")
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(143))
    signal.signal(signal.SIGALRM, lambda *a: sys.exit("bench: overall time limit reached"))
    signal.alarm(int(os.environ.get("LIMIT_S", "1800")))
    print("# machine: %d cpus, kernel %s, %s; netns %s; load1 at start %s" % (
        os.cpu_count(), os.uname().release, sh("java", "-version", check=False) or
        subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()[0], NS, load()), flush=True)
    print("# commit %s" % sh("git", "-C", ROOT, "log", "-1", "--format=%h %s", check=False).strip(), flush=True)
    try:
        setup()
        for n in SIZES:
            for run in range(1, RUNS + 1):
                global variant
                for variant in variants_for(run):
                    one_run(n, run)
    finally:
        cleanup()


if __name__ == "__main__":
    main()
