#!/usr/bin/env python3
# Usage (root):  bench/flanneld-churn.py
#   env BASE=1000        leases present when flanneld starts (the pool churns around this size, ±10 %)
#   env DURATION_S=660   how long the churn runs (≥ 600 for the 10 minutes)
#   env RATE=200         lease changes per second (add, change, remove; ≥ 100,000 in 10 min needs ≥ 167)
#   env SAMPLE_S=10      sampling period of RSS, threads and file descriptors
#   env FLANNELD_JAVA_OPTS=...  passed on to bin/flanneld
#   env KEEP_LOGS=1      keep the run directory
#
# Slow-leak check of the real daemon (bin/flanneld, etcd mode, VXLAN, peer probing on as shipped) in a throwaway
# network namespace with a real etcd on its loopback: BASE leases written upstream's way, flanneld started, then
# for DURATION_S seconds RATE changes per second — a new lease (grant + put), a changed lease (new VtepMAC and
# PublicIP, same subnet) or a removed one (delete), at random, the pool kept within ±10 % of BASE. Every SAMPLE_S
# seconds one line: the daemon's VmRSS, threads, open fds, the changes so far, and whether the kernel's route
# count matches the live leases. At the end: the second minute's and the last minute's mean RSS and their ratio,
# threads and fds min/max, and a final convergence check. Every wait is bounded; everything is removed on exit.
"""Whole-system soak: flanneld under continuous lease churn, sampling RSS, threads and fds."""
import base64, concurrent.futures as cf, http.client, json, os, random, signal, statistics, subprocess, sys, threading, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BASE = int(os.environ.get("BASE", "1000"))
DURATION_S = float(os.environ.get("DURATION_S", "660"))
RATE = int(os.environ.get("RATE", "200"))
SAMPLE_S = float(os.environ.get("SAMPLE_S", "10"))
NS = "jfch%05d" % random.randint(0, 99999)
D = "/tmp/jflannel-bench-" + NS
PORT = 2379
PREFIX = "/coreos.com/network"
X = ["ip", "netns", "exec", NS]
procs = []
local = threading.local()


def sh(*cmd, check=True):
    r = subprocess.run(list(cmd), capture_output=True, text=True, timeout=120)
    if check and r.returncode != 0:
        raise SystemExit("failed: %s\n%s%s" % (" ".join(cmd), r.stdout[-2000:], r.stderr[-2000:]))
    return r.stdout


def load():
    return open("/proc/loadavg").read().split()[0]


def b64(s):
    return base64.b64encode(s.encode()).decode()


def call(path, body):
    c = getattr(local, "c", None)
    if c is None:
        c = local.c = http.client.HTTPConnection("127.0.0.1", PORT, timeout=30)
    try:
        c.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
        r = c.getresponse()
        data = r.read()
    except (OSError, http.client.HTTPException):
        c.close()
        local.c = None
        raise
    if r.status != 200:
        raise RuntimeError("etcd %s: %d %s" % (path, r.status, data[:300]))
    return json.loads(data)


def key_of(i):
    a, b = divmod(i + 1, 256)
    return "%s/subnets/10.%d.%d.0-24" % (PREFIX, a, b)


def value_of(i, gen):
    """Lease i's value in generation gen: a change gives the peer a new VtepMAC and PublicIP."""
    return ('{"PublicIP":"198.18.%d.%d","PublicIPv6":null,"BackendType":"vxlan",'
            '"BackendData":{"VNI":1,"VtepMAC":"0e:%02x:00:%02x:%02x:%02x"}}'
            % (gen % 200, i % 250 + 1, gen % 256, (i >> 16) & 255, (i >> 8) & 255, i & 255))


def put(i, gen):
    call("/v3/kv/put", {"key": b64(key_of(i)), "value": b64(value_of(i, gen)),
                        "lease": call("/v3/lease/grant", {"TTL": 86400})["ID"]})


def delete(i):
    call("/v3/kv/deleterange", {"key": b64(key_of(i))})


def proc_stats(pid):
    rss = 0.0
    for line in open("/proc/%d/status" % pid):
        if line.startswith("VmRSS:"):
            rss = int(line.split()[1]) / 1024
    return rss, len(os.listdir("/proc/%d/task" % pid)), len(os.listdir("/proc/%d/fd" % pid))


def routes():
    return sh(*X, "ip", "route", "show", "dev", "flannel.1", check=False).count("onlink")


def java_pid(p):
    """`ip netns exec` execs bin/flanneld, which execs java: wait until the process is the JVM."""
    for _ in range(200):
        try:
            if open("/proc/%d/comm" % p.pid).read().strip() == "java":
                return p.pid
        except OSError:
            pass
        time.sleep(0.05)
    return p.pid


def own_index():
    for line in open(D + "/subnet.env"):
        if line.startswith("FLANNEL_SUBNET="):
            a, b = [int(x) for x in line.split("=", 1)[1].split("/")[0].split(".")[1:3]]
            return a * 256 + b - 1
    return -1


def enter_netns():
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open("/run/netns/" + NS, os.O_RDONLY)
    if libc.setns(fd, 0x40000000) != 0:
        raise OSError(ctypes.get_errno(), "setns " + NS)
    os.close(fd)


def setup():
    os.makedirs(D, exist_ok=True)
    sh("ip", "netns", "add", NS)
    enter_netns()
    for c in (["ip", "link", "set", "lo", "up"], ["ip", "link", "add", "ext0", "type", "veth", "peer", "name", "ext0p"],
              ["ip", "link", "set", "ext0p", "up"], ["ip", "addr", "add", "192.0.2.10/24", "dev", "ext0"],
              ["ip", "link", "set", "ext0", "up"], ["ip", "route", "add", "default", "via", "192.0.2.1"]):
        sh(*X, *c)
    e = subprocess.Popen(X + ["etcd", "--data-dir", D + "/etcd", "--listen-client-urls", "http://127.0.0.1:%d" % PORT,
                              "--advertise-client-urls", "http://127.0.0.1:%d" % PORT,
                              "--listen-peer-urls", "http://127.0.0.1:2380", "--auto-compaction-retention", "5m",
                              "--auto-compaction-mode", "periodic",
                              "--quota-backend-bytes", str(2 * 1024 ** 3)],
                         stdout=open(D + "/etcd.log", "w"), stderr=subprocess.STDOUT, start_new_session=True)
    procs.append(e)
    for _ in range(100):
        try:
            call("/v3/kv/put", {"key": b64(PREFIX + "/config"),
                                "value": b64('{"Network":"10.0.0.0/8","SubnetLen":24,"Backend":{"Type":"vxlan"}}')})
            return
        except (OSError, http.client.HTTPException):
            time.sleep(0.2)
    raise SystemExit("etcd did not come up, see " + D + "/etcd.log")


def cleanup():
    for p in list(procs):
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(15)
            except subprocess.TimeoutExpired:
                p.kill()
    subprocess.run(["ip", "netns", "del", NS], capture_output=True)
    if not os.environ.get("KEEP_LOGS"):
        subprocess.run(["rm", "-rf", D])
    else:
        print("# logs kept in " + D)


def run():
    live = {}  # index -> generation
    with cf.ThreadPoolExecutor(16) as ex:
        list(ex.map(lambda i: put(i, 0), range(BASE)))
    live.update({i: 0 for i in range(BASE)})
    log = open(D + "/flanneld.log", "w")
    p = subprocess.Popen(X + [os.path.join(ROOT, "bin", "flanneld"), "--etcd-endpoints=http://127.0.0.1:%d" % PORT,
                              "--iface=ext0", "--subnet-file=" + D + "/subnet.env"],
                         stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    procs.append(p)
    jp = java_pid(p)
    end = time.time() + 120
    while time.time() < end and routes() < BASE - 1:
        time.sleep(0.2)
    own = own_index()
    live.pop(own, None)
    free = [i for i in range(BASE, 60000) if i != own]
    random.shuffle(free)
    print("# flanneld pid %d converged on %d routes; churn %d changes/s for %.0f s" % (jp, routes(), RATE, DURATION_S), flush=True)
    samples = []  # (t, rss, threads, fds)
    changes = errors = 0
    t0 = time.time()
    next_sample = t0
    with cf.ThreadPoolExecutor(8) as ex:
        while time.time() - t0 < DURATION_S:
            if p.poll() is not None:
                raise SystemExit("flanneld exited with %d, log %s/flanneld.log" % (p.returncode, D))
            sec = time.time()
            ops, used = [], set()
            for _ in range(RATE):
                n, r = len(live), random.random()
                if n < BASE * 0.9 or (r < 1 / 3 and n < BASE * 1.1):
                    i = free.pop()
                    live[i] = 0
                    ops.append(("add", i, 0))
                    used.add(i)
                    continue
                i = random.choice(keys) if (keys := list(live)) else None
                if i is None or i in used:
                    continue
                used.add(i)
                if n > BASE * 1.1 or (r < 2 / 3 and n > BASE * 0.9):
                    live.pop(i)
                    free.insert(0, i)
                    ops.append(("del", i, 0))
                else:
                    live[i] += 1
                    ops.append(("chg", i, live[i]))

            def do(op):
                kind, i, gen = op
                try:
                    delete(i) if kind == "del" else put(i, gen)
                    return 1
                except Exception:
                    return 0
            done = sum(ex.map(do, ops))
            changes += done
            errors += len(ops) - done
            if time.time() >= next_sample:
                rss, th, fds = proc_stats(jp)
                samples.append((time.time() - t0, rss, th, fds))
                print("sample t_s=%.0f rss_mb=%.1f threads=%d fds=%d changes=%d errors=%d live=%d routes=%d load1=%s"
                      % (time.time() - t0, rss, th, fds, changes, errors, len(live), routes(), load()), flush=True)
                next_sample += SAMPLE_S
            time.sleep(max(0, sec + 1 - time.time()))
    # everything applied? the kernel must converge on the live leases
    end = time.time() + 60
    while time.time() < end and routes() != len(live):
        time.sleep(0.5)
    second = [s[1] for s in samples if 60 <= s[0] < 120]
    last = [s[1] for s in samples if s[0] >= samples[-1][0] - 60]
    ths, fds = [s[2] for s in samples], [s[3] for s in samples]
    m2, ml = statistics.mean(second or [0]), statistics.mean(last or [0])
    print("churn duration_s=%.0f changes=%d errors=%d rss_mb_second_minute=%.1f rss_mb_last_minute=%.1f ratio=%.3f "
          "threads_min=%d threads_max=%d fds_min=%d fds_max=%d final_routes=%d live_leases=%d load1=%s"
          % (time.time() - t0, changes, errors, m2, ml, ml / m2 if m2 else 0, min(ths), max(ths), min(fds), max(fds),
             routes(), len(live), load()), flush=True)


def main():
    if os.geteuid() != 0:
        raise SystemExit("needs root")
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(143))
    signal.signal(signal.SIGALRM, lambda *a: sys.exit("bench: overall time limit reached"))
    signal.alarm(int(DURATION_S + 600))
    print("# %d cpus, kernel %s; netns %s; load1 at start %s; commit %s" % (
        os.cpu_count(), os.uname().release, NS, load(),
        sh("git", "-C", ROOT, "log", "-1", "--format=%h", check=False).strip()), flush=True)
    try:
        setup()
        run()
    finally:
        cleanup()


if __name__ == "__main__":
    main()
