#!/usr/bin/env python3
# Usage (root): bench/flanneld-probe-cost.py [N]      (default 2000)
#   env WINDOW_S=60   CPU sampling window once the first probe rounds are done
#   env RUNS=1        repetitions of the off/on pair
#   env OFF=0         skip the run with probing off
#   env ANSWER=1      the peers answer: a responder namespace behind ext0 owns the peers' public IPs
#                     (198.18.0.0/15 local) and one VXLAN device with the VTEP MAC every lease publishes; all of
#                     10.0.0.0/8 is local there but the daemon's subnet (a rule before the local table sends it
#                     to the main table: back through VXLAN), so its kernel answers every peer's probes.
#                     The healthy path: 2 probes and 2 replies per peer and interval
#
# Cost of the peer prober (issue 12) at N peers: the convergence bench's setup (real etcd, N
# upstream-format VXLAN leases, bin/flanneld in a throwaway namespace, flanneld-convergence.py's own
# functions), run once with FLANNELD_PEER_PROBE=false and once with probing on. The fake peers'
# public IPs (198.18.0.0/15) lead nowhere, so every round is a failing one: small + full-size probe,
# then the retry and the underlay probe, then the classification: the most work a round can cost.
# Per run: convergence time, then after WINDOW_S of steady state the daemon's CPU (utime+stime of all
# threads, % of one core), the peer-probe thread's own CPU, and VmRSS. One result line per run.
"""Peer prober cost at N fake peers: CPU and RSS with probing off and on."""
import http.client, importlib.util, os, re, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("conv", os.path.join(HERE, "flanneld-convergence.py"))
conv = importlib.util.module_from_spec(spec)
spec.loader.exec_module(conv)

N = int(sys.argv[1]) if len(sys.argv) > 1 else 2000
WINDOW_S = float(os.environ.get("WINDOW_S", "60"))
RUNS = int(os.environ.get("RUNS", "1"))
TICK = os.sysconf("SC_CLK_TCK")


def cpu_ticks(pid, tid=None, which=(11, 12)):
    path = "/proc/%d/stat" % pid if tid is None else "/proc/%d/task/%s/stat" % (pid, tid)
    f = open(path).read().rsplit(")", 1)[1].split()
    return sum(int(f[i]) for i in which)  # utime (field 14), stime (field 15)


def thread_named(pid, name):
    for tid in os.listdir("/proc/%d/task" % pid):
        try:
            if open("/proc/%d/task/%s/comm" % (pid, tid)).read().strip() == name:
                return tid
        except OSError:
            pass
    return None


ANSWER = os.environ.get("ANSWER") == "1"
VTEP_MAC = "0e:aa:00:00:00:01"
HEALTHZ = 8081


def answered_lease_of(i, orig=conv.lease_of):
    key, value = orig(i)
    return key, re.sub(r'"VtepMAC":"[0-9a-f:]+"', '"VtepMAC":"%s"' % VTEP_MAC, value)


R = conv.NS + "r"
RX = ["ip", "netns", "exec", R]


def answering_setup():
    """Once: the responder namespace on the other end of ext0, answering for every peer."""
    conv.sh("ip", "netns", "add", R)
    conv.sh(*conv.X, "ip", "link", "set", "ext0p", "netns", R)
    for c in (["ip", "link", "set", "lo", "up"], ["ip", "addr", "add", "192.0.2.1/24", "dev", "ext0p"],
              ["ip", "link", "set", "ext0p", "up"], ["ip", "route", "add", "local", "198.18.0.0/15", "dev", "lo"],
              ["ip", "link", "add", "vxr", "address", VTEP_MAC, "type", "vxlan", "id", "1", "dstport", "8472",
               "nolearning", "dev", "ext0p"],
              ["ip", "link", "set", "vxr", "up"],
              ["ip", "rule", "add", "pref", "100", "lookup", "local"], ["ip", "rule", "del", "pref", "0"],
              ["ip", "route", "add", "local", "10.0.0.0/8", "dev", "lo"],
              ["sysctl", "-qw", "net.ipv4.conf.all.rp_filter=0"], ["sysctl", "-qw", "net.ipv4.conf.vxr.rp_filter=0"]):
        conv.sh(*RX, *c)


def answering_return_path():
    """After the daemon started: the responder's route, neighbour and FDB entry back to the daemon's VTEP."""
    subnet = [l.split("=", 1)[1].strip() for l in open(conv.D + "/subnet.env") if l.startswith("FLANNEL_SUBNET=")][0]
    o = subnet.split("/")[0].split(".")
    net = "%s.%s.%s.0" % (o[0], o[1], o[2])
    mac = re.search(r"link/ether (\S+)", conv.sh(*conv.X, "ip", "link", "show", "flannel.1")).group(1)
    conv.sh(*RX, "ip", "neigh", "replace", net, "lladdr", mac, "dev", "vxr", "nud", "permanent")
    conv.sh(*RX, "bridge", "fdb", "replace", mac, "dev", "vxr", "dst", "192.0.2.10")
    conv.sh(*RX, "ip", "route", "replace", net + "/24", "dev", "vxr")  # replies go to the VTEP address itself
    conv.sh(*RX, "ip", "rule", "add", "pref", "5", "to", net + "/24", "lookup", "main")  # before 10/8 local


def reachable_count():
    try:
        c = http.client.HTTPConnection("127.0.0.1", HEALTHZ, timeout=5)
        c.request("GET", "/metrics")
        body = c.getresponse().read().decode()
        return sum(1 for l in body.splitlines() if l.startswith("flanneld_peer_reachable{") and l.endswith(" 1.0"))
    except OSError:
        return -1


def one(probe, run):
    os.environ["FLANNELD_PEER_PROBE"] = "true" if probe else "false"
    conv.etcd.delete_prefix(conv.PREFIX + "/subnets/")
    conv.sh("ip", "-n", conv.NS, "link", "del", "flannel.1", check=False)

    if os.path.exists(conv.D + "/subnet.env"):
        os.remove(conv.D + "/subnet.env")
    conv.write_leases(0, N)
    time.sleep(1)
    tag = "probe-%s-%d" % ("on" if probe else "off", run)
    p, t0 = conv.start_flanneld(tag)
    if ANSWER:  # one FDB entry (one MAC) for all: wait for the routes only
        end, t_done = time.time() + 30 + N / 100, None
        while time.time() < end and t_done is None:
            if conv.counts() >= N:
                t_done = time.time()
            time.sleep(0.02)
        c = (conv.counts(), 0, 0)
        answering_return_path()
    else:
        t_done, c = conv.await_programmed(N, 30 + N / 100)
    jp = conv.java_pid(p)
    time.sleep(35 if ANSWER else 15)  # first rounds: every peer once (10 s interval) and its failure path
    tid = thread_named(jp, "peer-probe")
    c0, w0 = cpu_ticks(jp), time.time()
    t0_probe = cpu_ticks(jp, tid) if tid else 0
    s0_probe = cpu_ticks(jp, tid, (12,)) if tid else 0
    time.sleep(WINDOW_S)
    c1, w1 = cpu_ticks(jp), time.time()
    t1_probe = cpu_ticks(jp, tid) if tid else 0
    s1_probe = cpu_ticks(jp, tid, (12,)) if tid else 0
    wall = w1 - w0
    log = open("%s/flanneld-%s.log" % (conv.D, tag)).read()
    reach = reachable_count() if probe else -1
    print("probe-cost answered=%s reachable=%d leases=%d probe=%s run=%d converged_s=%s routes=%d daemon_cpu_pct=%.2f peer_probe_thread_cpu_pct=%s "
          "of_which_kernel_pct=%s rss_mb=%.1f unreachable_lines=%d window_s=%.0f load1=%s"
          % (ANSWER, reach, N, "on" if probe else "off", run, ("%.2f" % (t_done - t0)) if t_done else "TIMEOUT", c[0],
             100.0 * (c1 - c0) / TICK / wall, ("%.2f" % (100.0 * (t1_probe - t0_probe) / TICK / wall)) if tid else "-",
             ("%.2f" % (100.0 * (s1_probe - s0_probe) / TICK / wall)) if tid else "-",
             conv.rss_mb(jp), log.count("peer unreachable"), wall, conv.load()), flush=True)
    conv.stop(p)


def main():
    if os.geteuid() != 0:
        raise SystemExit("needs root")
    print("# machine: %d cpus, kernel %s; load1 at start %s" % (os.cpu_count(), os.uname().release, conv.load()), flush=True)
    print("# commit %s" % conv.sh("git", "-C", conv.ROOT, "log", "-1", "--format=%h %s", check=False).strip(), flush=True)
    try:
        os.environ["FLANNELD_HEALTHZ_PORT"] = str(HEALTHZ)
        os.environ["FLANNELD_HEALTHZ_IP"] = "127.0.0.1"
        if ANSWER:
            conv.lease_of = answered_lease_of
        conv.setup()
        if ANSWER:
            answering_setup()
        for run in range(1, RUNS + 1):
            if os.environ.get("OFF", "1") == "1":
                one(False, run)
            one(True, run)
    finally:
        conv.cleanup()
        if ANSWER:
            conv.subprocess.run(["ip", "netns", "del", R], capture_output=True)


if __name__ == "__main__":
    main()
