#!/usr/bin/env python3
# Usage (root): bench/flanneld-probe-cost.py [N]      (default 2000)
#   env WINDOW_S=60   CPU sampling window once the first probe rounds are done
#   env RUNS=1        repetitions of the off/on pair
#
# Cost of the peer prober (issue 12) at N peers: the convergence bench's setup (real etcd, N
# upstream-format VXLAN leases, bin/flanneld in a throwaway namespace, flanneld-convergence.py's own
# functions), run once with FLANNELD_PEER_PROBE=false and once with probing on. The fake peers'
# public IPs (198.18.0.0/15) lead nowhere, so every round is a failing one: small + full-size probe,
# then the retry and the underlay probe, then the classification: the most work a round can cost.
# Per run: convergence time, then after WINDOW_S of steady state the daemon's CPU (utime+stime of all
# threads, % of one core), the peer-probe thread's own CPU, and VmRSS. One result line per run.
"""Peer prober cost at N fake peers: CPU and RSS with probing off and on."""
import importlib.util, os, sys, time

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
    t_done, c = conv.await_programmed(N, 30 + N / 100)
    jp = conv.java_pid(p)
    time.sleep(15)  # first rounds: every peer once (10 s interval) and its failure path
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
    print("probe-cost leases=%d probe=%s run=%d converged_s=%s routes=%d daemon_cpu_pct=%.2f peer_probe_thread_cpu_pct=%s "
          "of_which_kernel_pct=%s rss_mb=%.1f unreachable_lines=%d window_s=%.0f load1=%s"
          % (N, "on" if probe else "off", run, ("%.2f" % (t_done - t0)) if t_done else "TIMEOUT", c[0],
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
        conv.setup()
        for run in range(1, RUNS + 1):
            one(False, run)
            one(True, run)
    finally:
        conv.cleanup()


if __name__ == "__main__":
    main()
