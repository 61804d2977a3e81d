#!/usr/bin/env python3
# Usage (root):  bench/flanneld-etcd-outage.py
#   env PEERS=2        flanneld nodes running before the outage
#   env OUTAGE_S=20    how long etcd stays down
#   env JOIN_AT_S=5    seconds into the outage at which the new node's flanneld is started
#   env RUNS=1         repetitions (each with a fresh etcd and fresh nodes)
#   env EXTRA=0        extra peer leases written upstream's way before the peers start (scale: every
#                      daemon programs them too; they have no daemon behind them)
#   env UPSTREAM=1     the peers and the new node run upstream's flanneld ($JFLANNEL_UPSTREAM_DIR/flanneld)
#   env KEEP_LOGS=1    keep the run directory (daemon and etcd logs)
#
# A node that joins during an etcd outage: a real etcd in a hub namespace, PEERS real flanneld (bin/flanneld,
# etcd mode, VXLAN) in node namespaces joined by a bridge; once all peers program each other, etcd is
# stopped (SIGTERM) for OUTAGE_S seconds, a new node's flanneld is started JOIN_AT_S seconds into the
# outage, then etcd is started again on the same data directory. Reports, per peer, the seconds from
# etcd's return (its first answered request) until the peer has programmed the new node's route, and for
# the new node the seconds until its subnet.env and until it has programmed every peer. Also checks that no
# peer lost a route during the outage. Every wait is bounded; everything is removed on exit.
"""Whole-system fault benchmark: a flanneld node started while etcd is down, seconds to programmed after etcd returns."""
import base64, http.client, json, os, random, signal, subprocess, sys, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PEERS = int(os.environ.get("PEERS", "2"))
OUTAGE_S = float(os.environ.get("OUTAGE_S", "20"))
JOIN_AT_S = float(os.environ.get("JOIN_AT_S", "5"))
RUNS = int(os.environ.get("RUNS", "1"))
EXTRA = int(os.environ.get("EXTRA", "0"))
UPSTREAM = os.environ.get("UPSTREAM") == "1"
UPSTREAM_FLANNELD = os.path.join(os.environ.get("JFLANNEL_UPSTREAM_DIR", ""), "flanneld")
if UPSTREAM and not (os.environ.get("JFLANNEL_UPSTREAM_DIR") and os.access(UPSTREAM_FLANNELD, os.X_OK)):
    sys.exit("flanneld-etcd-outage: UPSTREAM=1 needs upstream flanneld v0.20.2: set JFLANNEL_UPSTREAM_DIR to a folder holding flanneld")
FLANNELD = UPSTREAM_FLANNELD if UPSTREAM else os.path.join(ROOT, "bin", "flanneld")
TAG = "jfo%04d" % random.randint(0, 9999)
HUB = TAG + "h"
D = "/tmp/jflannel-bench-" + TAG
PREFIX = "/coreos.com/network"
ETCD_IP = "192.0.2.1"
procs = []
namespaces = []


def sh(*cmd, check=True):
    r = subprocess.run(list(cmd), capture_output=True, text=True, timeout=60)
    if check and r.returncode != 0:
        raise SystemExit("failed: %s\n%s%s" % (" ".join(cmd), r.stdout[-2000:], r.stderr[-2000:]))
    return r.stdout


def load():
    return open("/proc/loadavg").read().split()[0]


def b64(s):
    return base64.b64encode(s.encode()).decode()


def etcd_call(path, body, timeout=2):
    """etcd v3's JSON gateway on the hub's address (this process lives in the hub namespace)."""
    c = http.client.HTTPConnection(ETCD_IP, 2379, timeout=timeout)
    try:
        c.request("POST", path, json.dumps(body), {"Content-Type": "application/json"})
        r = c.getresponse()
        data = r.read()
    finally:
        c.close()
    if r.status != 200:
        raise RuntimeError("etcd %s: %d %s" % (path, r.status, data[:300]))
    return json.loads(data)


def start_etcd(run):
    e = subprocess.Popen(["ip", "netns", "exec", HUB, "etcd", "--data-dir", "%s/etcd-%d" % (D, run),
                          "--listen-client-urls", "http://%s:2379" % ETCD_IP,
                          "--advertise-client-urls", "http://%s:2379" % ETCD_IP,
                          "--listen-peer-urls", "http://127.0.0.1:2380"],
                         stdout=open("%s/etcd-%d.log" % (D, run), "a"), stderr=subprocess.STDOUT, start_new_session=True)
    procs.append(e)
    return e


def await_etcd(limit_s=30):
    """Polls every 10 ms until etcd answers a read; returns that moment."""
    end = time.time() + limit_s
    while time.time() < end:
        try:
            etcd_call("/v3/kv/range", {"key": b64(PREFIX + "/config")}, timeout=1)
            return time.time()
        except (OSError, http.client.HTTPException, RuntimeError):
            time.sleep(0.01)
    raise SystemExit("etcd did not answer within %ds" % limit_s)


def stop(p, sig=signal.SIGTERM):
    if p.poll() is None:
        p.send_signal(sig)
        try:
            p.wait(20)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait(10)
    if p in procs:
        procs.remove(p)


def add_node(name, index):
    sh("ip", "netns", "add", name)
    namespaces.append(name)
    sh("ip", "-n", name, "link", "set", "lo", "up")
    sh("ip", "link", "add", "eth0", "netns", name, "type", "veth", "peer", "name", "v" + name[-6:], "netns", HUB)
    sh("ip", "-n", HUB, "link", "set", "v" + name[-6:], "master", "br0", "up")
    sh("ip", "-n", name, "addr", "add", "192.0.2.%d/24" % (10 + index), "dev", "eth0")
    sh("ip", "-n", name, "link", "set", "eth0", "up")


def start_flanneld(name):
    os.makedirs("%s/%s" % (D, name), exist_ok=True)
    p = subprocess.Popen(["ip", "netns", "exec", name, FLANNELD, "--etcd-endpoints=http://%s:2379" % ETCD_IP,
                          "--iface=eth0", "--subnet-file=%s/%s/subnet.env" % (D, name)],
                         stdout=open("%s/%s/flanneld.log" % (D, name), "w"), stderr=subprocess.STDOUT,
                         env=dict(os.environ), start_new_session=True)
    procs.append(p)
    return p


def subnet_of(name):
    try:
        for line in open("%s/%s/subnet.env" % (D, name)):
            if line.startswith("FLANNEL_SUBNET="):
                a = line.split("=", 1)[1].strip().split("/")[0].split(".")
                return "%s.%s.%s.0/24" % (a[0], a[1], a[2])
    except OSError:
        pass
    return None


def routes(name):
    out = sh("ip", "-n", name, "route", "show", "dev", "flannel.1", check=False)
    return {line.split()[0] for line in out.splitlines() if "onlink" in line}


def wait_until(cond, limit_s, step=0.01):
    end = time.time() + limit_s
    while time.time() < end:
        v = cond()
        if v:
            return time.time(), v
        time.sleep(step)
    return None, None


def write_extra(n):
    for i in range(n):
        a, b = divmod(i + 1, 256)
        lease = etcd_call("/v3/lease/grant", {"TTL": 86400})["ID"]
        etcd_call("/v3/kv/put", {"key": b64("%s/subnets/10.%d.%d.0-24" % (PREFIX, 100 + a, b)), "lease": lease,
                                 "value": b64('{"PublicIP":"198.18.%d.%d","BackendType":"vxlan","BackendData":'
                                              '{"VNI":1,"VtepMAC":"0e:00:00:00:%02x:%02x"}}' % (a, b + 1, a, b))})


def one_run(run):
    nodes = ["%sn%d%d" % (TAG, run, i) for i in range(PEERS + 1)]
    for i, n in enumerate(nodes):
        add_node(n, i)
    etcd = start_etcd(run)
    await_etcd()
    etcd_call("/v3/kv/put", {"key": b64(PREFIX + "/config"),
                             "value": b64('{"Network":"10.0.0.0/8","SubnetLen":24,"Backend":{"Type":"vxlan"}}')})
    write_extra(EXTRA)
    peers, newcomer = nodes[:PEERS], nodes[PEERS]
    daemons = {n: start_flanneld(n) for n in peers}
    t, _ = wait_until(lambda: all(subnet_of(n) for n in peers), 120, 0.05)
    if t is None:
        raise SystemExit("peers did not write subnet.env, logs in " + D)
    want = {n: {subnet_of(m) for m in peers if m != n} for n in peers}
    t, _ = wait_until(lambda: all(want[n] <= routes(n) for n in peers), 120, 0.05)
    if t is None:
        raise SystemExit("peers did not program each other, logs in " + D)
    before = {n: routes(n) for n in peers}
    time.sleep(2)  # let the peers settle (first reconcile) before the outage
    stop(etcd)
    t_stop = time.time()
    time.sleep(JOIN_AT_S)
    daemons[newcomer] = start_flanneld(newcomer)
    rest = t_stop + OUTAGE_S - time.time()
    lost = set()
    end = time.time() + max(0, rest)
    while time.time() < end:  # watch the peers' routes during the outage: nothing may go
        for n in peers:
            lost |= {(n, r) for r in before[n] - routes(n)}
        time.sleep(0.2)
    etcd = start_etcd(run)
    t_back = await_etcd()
    t_env, _ = wait_until(lambda: subnet_of(newcomer), 60)
    sub = subnet_of(newcomer)
    results = {}
    for n in peers:
        t, _ = wait_until(lambda: sub in routes(n), 30) if sub else (None, None)
        results[n] = t
    t_new, _ = wait_until(lambda: {subnet_of(m) for m in peers} <= routes(newcomer), 30)
    per_peer = " ".join("%s=%s" % (n[-2:], ("%.2f" % (t - t_back)) if t else "TIMEOUT") for n, t in results.items())
    worst = max((t - t_back for t in results.values() if t), default=None)
    print("outage run=%d peers=%d extra=%d outage_s=%.0f join_at_s=%.0f new_subnet_env_s=%s new_programmed_peers_s=%s "
          "peers_programmed_new_s: %s worst_s=%s routes_lost_during_outage=%d load1=%s%s"
          % (run, PEERS, EXTRA, OUTAGE_S, JOIN_AT_S, ("%.2f" % (t_env - t_back)) if t_env else "TIMEOUT",
             ("%.2f" % (t_new - t_back)) if t_new else "TIMEOUT", per_peer,
             ("%.2f" % worst) if worst is not None and len(results) == sum(1 for t in results.values() if t) else "TIMEOUT",
             len(lost), load(), (" upstream" if UPSTREAM else "")), flush=True)
    for p in list(daemons.values()):
        stop(p)
    stop(etcd)


def enter_hub():
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    fd = os.open("/run/netns/" + HUB, os.O_RDONLY)
    if libc.setns(fd, 0x40000000) != 0:  # CLONE_NEWNET
        raise OSError(ctypes.get_errno(), "setns " + HUB)
    os.close(fd)


def cleanup():
    for p in list(procs):
        stop(p)
    for n in reversed(namespaces):
        subprocess.run(["ip", "netns", "del", n], capture_output=True)
    if not os.environ.get("KEEP_LOGS"):
        subprocess.run(["rm", "-rf", D])
    else:
        print("# logs kept in " + D)


def main():
    if os.geteuid() != 0:
        raise SystemExit("needs root")
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(143))
    signal.signal(signal.SIGALRM, lambda *a: sys.exit("bench: overall time limit reached"))
    signal.alarm(int(os.environ.get("LIMIT_S", "900")))
    os.makedirs(D, exist_ok=True)
    print("# %d cpus, kernel %s; namespaces %s*; load1 at start %s; flanneld %s; commit %s" % (
        os.cpu_count(), os.uname().release, TAG, load(), FLANNELD,
        sh("git", "-C", ROOT, "log", "-1", "--format=%h", check=False).strip()), flush=True)
    try:
        sh("ip", "netns", "add", HUB)
        namespaces.append(HUB)
        enter_hub()
        sh("ip", "-n", HUB, "link", "set", "lo", "up")
        sh("ip", "-n", HUB, "link", "add", "br0", "type", "bridge")
        sh("ip", "-n", HUB, "addr", "add", ETCD_IP + "/24", "dev", "br0")
        sh("ip", "-n", HUB, "link", "set", "br0", "up")
        for run in range(1, RUNS + 1):
            one_run(run)
    finally:
        cleanup()


if __name__ == "__main__":
    main()
