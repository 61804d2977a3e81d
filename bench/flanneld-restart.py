#!/usr/bin/env python3
# Usage (root):  bench/flanneld-restart.py [N ...]       (default 10000)
#   env RUNS=1          restarts per N (each: SIGKILL, start again)
#   env UPSTREAM=1      run upstream's flanneld ($JFLANNEL_UPSTREAM_DIR/flanneld) instead, same procedure
#   env KEEP_LOGS=1     keep the run directory
#   env VARIANTS=...    A/B in one invocation, as flanneld-convergence.py's (e.g. "JFLANNEL_ROUTE_NEXTHOPS=0;JFLANNEL_ROUTE_NEXTHOPS=1")
#
# Restart at scale: N leases written upstream's way into a real etcd (the setup of flanneld-convergence.py,
# whose helpers this script imports), flanneld started and left to program all N peers; then `ip monitor all`
# and `bridge monitor fdb` are started in the node's namespace, the daemon is SIGKILLed and started again.
# Reports, per restart: kernel deletions seen (lines starting with "Deleted": neighbours, routes, FDB entries,
# links) from the kill until 5 s after the new daemon programmed its snapshot; whether all N neighbours, FDB
# entries and routes were present throughout (sampled); and the seconds from the new exec until the daemon's
# own "lease snapshot programmed" line, beside its subnet.env time. Everything is removed on exit.
"""Whole-system restart benchmark: flanneld SIGKILLed with N peers programmed, kernel deletes counted."""
import importlib.util, os, re, signal, subprocess, sys, time

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("conv", os.path.join(HERE, "flanneld-convergence.py"))
conv = importlib.util.module_from_spec(spec)
spec.loader.exec_module(conv)
SIZES = [int(a) for a in sys.argv[1:]] or [10000]
RUNS = int(os.environ.get("RUNS", "1"))
UPSTREAM = os.environ.get("UPSTREAM") == "1"
UPSTREAM_FLANNELD = os.path.join(os.environ.get("JFLANNEL_UPSTREAM_DIR", ""), "flanneld")
if UPSTREAM and not (os.environ.get("JFLANNEL_UPSTREAM_DIR") and os.access(UPSTREAM_FLANNELD, os.X_OK)):
    sys.exit("flanneld-restart: UPSTREAM=1 needs upstream flanneld v0.20.2: set JFLANNEL_UPSTREAM_DIR to a folder holding flanneld")


def start(tag):
    if not UPSTREAM:
        return conv.start_flanneld(tag)
    log = open("%s/flanneld-%s.log" % (conv.D, tag), "w")
    t = time.time()
    p = subprocess.Popen(conv.X + [UPSTREAM_FLANNELD, "--etcd-endpoints=http://127.0.0.1:%d" % conv.PORT,
                                   "--iface=ext0", "--subnet-file=" + conv.D + "/subnet.env"],
                         stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    conv.procs.append(p)
    return p, t


def daemon_pid(p):
    """`ip netns exec` execs bin/flanneld, which execs java (or upstream's binary): the process itself, once it
    is the daemon (never a child: the daemon runs iptables, whose pid a child lookup could return)."""
    for _ in range(200):
        try:
            if UPSTREAM or open("/proc/%d/comm" % p.pid).read().strip() == "java":
                return p.pid
        except OSError:
            pass
        time.sleep(0.05)
    return p.pid


def monitors(tag):
    ms = []
    for name, cmd in (("ip", ["ip", "-n", conv.NS, "monitor", "all"]), ("bridge", ["bridge", "-n", conv.NS, "monitor", "fdb"])):
        out = open("%s/monitor-%s-%s.log" % (conv.D, name, tag), "w")
        p = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        conv.procs.append(p)
        ms.append((p, out.name))
    time.sleep(0.5)  # let the monitors subscribe before anything happens
    return ms


def deleted(ms):
    """Deletions seen by the monitors: flannel's own (on flannel.1: neighbours, FDB entries, routes; the device
    itself) by kind, and the rest (e.g. the kernel expiring a FAILED ARP entry on ext0) as "unrelated"."""
    counts = {}
    for p, path in ms:
        p.send_signal(signal.SIGTERM)
        p.wait(10)
        conv.procs.remove(p)
        for line in open(path):
            line = re.sub(r"^\[[A-Z]+\]", "", line)  # `ip monitor all` prefixes the kind: [ROUTE]Deleted ...
            if not line.startswith("Deleted"):
                continue
            if "flannel.1" not in line:
                kind = "unrelated"
            elif " via " in line or re.match(r"Deleted \d+\.\d+\.\d+\.\d+/\d+", line):
                kind = "route"
            elif "lladdr" in line:
                kind = "neigh"
            elif " dst " in line or " self" in line or "master" in line:
                kind = "fdb"
            else:
                kind = "other"
            counts[kind] = counts.get(kind, 0) + 1
    return counts


def snapshot_s(tag, t0, limit_s):
    """Seconds from exec to the daemon's snapshot-programmed line (ours) or, for upstream, to all routes seen."""
    end = t0 + limit_s
    path = "%s/flanneld-%s.log" % (conv.D, tag)
    while time.time() < end:
        if not UPSTREAM and re.search(r"lease snapshot programmed", open(path).read()):
            return time.time() - t0
        time.sleep(0.02)
    return None


def one(n, run):
    conv.etcd.delete_prefix(conv.PREFIX + "/subnets/")
    conv.sh("ip", "-n", conv.NS, "link", "del", "flannel.1", check=False)
    if os.path.exists(conv.D + "/subnet.env"):
        os.remove(conv.D + "/subnet.env")
    conv.write_leases(0, n)
    vt = "-v%d" % conv.VARIANTS.index(conv.variant) if conv.variant else ""
    p, t0 = start("%d-%d%s-first" % (n, run, vt))
    t_done, c = conv.await_programmed(n, 60 + n / 100)
    if not t_done:
        raise SystemExit("first start did not converge: %s, logs in %s" % (c, conv.D))
    time.sleep(3)  # past the first reconcile
    tag = "%d-%d%s-restart" % (n, run, vt)
    ms = monitors(tag)
    jp = daemon_pid(p)
    os.kill(jp, signal.SIGKILL)
    p.wait(10)
    conv.procs.remove(p)
    p, t0 = start(tag)
    low = n
    end = t0 + 30 + n / 200
    t_snap = None
    logpath = "%s/flanneld-%s.log" % (conv.D, tag)
    while time.time() < end:  # sample the kernel while the new daemon starts; nothing may go missing
        low = min(low, min(conv.full_counts()))
        if t_snap is None and not UPSTREAM and "lease snapshot programmed" in open(logpath).read():
            t_snap = time.time()
            end = min(end, t_snap + 5)
        time.sleep(0.05)
    env_s = conv.snapshot_line(tag) if not UPSTREAM else ""
    dels = deleted(ms)
    flannel = sum(v for k, v in dels.items() if k != "unrelated")
    print("restart leases=%d run=%d exec_to_snapshot_programmed_s=%s %s min_entries_during=%d kernel_deleted=%d %s "
          "rss_mb=%.1f load1=%s%s%s"
          % (n, run, ("%.2f" % (t_snap - t0)) if t_snap else "?", env_s, low, flannel,
             " ".join("%s=%d" % kv for kv in sorted(dels.items())) or "-", conv.rss_mb(daemon_pid(p)) if p.poll() is None else 0,
             conv.load(), " upstream" if UPSTREAM else "", conv.variant_tag()), flush=True)
    conv.stop(p)


def main():
    if os.geteuid() != 0:
        raise SystemExit("needs root")
    signal.signal(signal.SIGTERM, lambda *a: sys.exit(143))
    signal.signal(signal.SIGALRM, lambda *a: sys.exit("bench: overall time limit reached"))
    signal.alarm(int(os.environ.get("LIMIT_S", "1200")))
    print("# %d cpus, kernel %s; netns %s; load1 at start %s; commit %s" % (
        os.cpu_count(), os.uname().release, conv.NS, conv.load(),
        conv.sh("git", "-C", conv.ROOT, "log", "-1", "--format=%h", check=False).strip()), flush=True)
    try:
        conv.setup()
        for n in SIZES:
            for run in range(1, RUNS + 1):
                for conv.variant in conv.variants_for(run):
                    one(n, run)
    finally:
        conv.cleanup()


if __name__ == "__main__":
    main()
