#!/usr/bin/env bash
# Where a flannel pair's CPU goes under traffic: one bench/pod-throughput.sh run (one round, single stream), with a
# system-wide `perf record -g` in the middle of the flannel variant's iperf3 run; the daemons' JIT symbols dumped
# (jcmd Compiler.perfmap) before they exit. Needs root and perf. Usage:
#   OUT=DIR bench/pod-profile.sh [SECONDS] [PERF_SECONDS]     (default 30 s of iperf3, 12 s of perf)
# Every variable bench/pod-throughput.sh takes passes through (BACKEND=wireguard, JFLANNEL_*, FLANNELD_JAVA_OPTS, ...);
# WGGO, NOMASQ and IPT default to 0 (only the flannel pair and kernel VXLAN), WARMUP to 5. The daemons run with
# -XX:+PreserveFramePointer (added to FLANNELD_JAVA_OPTS) so that perf can walk their Java frames.
# DIR gets: bench.log, perf.data, perf.txt, pids, gbit_s, seconds; then bench/perf-categories.py LABEL=DIR ... compares
# runs (docs/benchmarks.md, "wireguard, session 13").
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "needs root" >&2; exit 1; }
command -v perf >/dev/null || { echo "needs perf (linux-perf)" >&2; exit 1; }
SECS=${1:-30}
PSECS=${2:-12}
[ "$PSECS" -le $((SECS - 8)) ] || { echo "PERF_SECONDS must be at most SECONDS - 8" >&2; exit 1; }
OUT=${OUT:?OUT=DIR: where the profile goes}
mkdir -p "$OUT"
export WGGO=${WGGO:-0} NOMASQ=${NOMASQ:-0} IPT=${IPT:-0} WARMUP=${WARMUP:-5} STREAMS=1
[ "$WARMUP" -ge 1 ] || { echo "WARMUP must be at least 1 (its line marks the start of the flannel run)" >&2; exit 1; }
export FLANNELD_JAVA_OPTS="${FLANNELD_JAVA_OPTS:-} -XX:+PreserveFramePointer"
bench/pod-throughput.sh "$SECS" 1 > "$OUT/bench.log" 2>&1 &
BENCH=$!
trap 'kill "$BENCH" 2>/dev/null || true' EXIT
for _ in $(seq 1 300); do grep -q '^# warm-up' "$OUT/bench.log" && break; sleep 1; done
grep -q '^# warm-up' "$OUT/bench.log" || { echo "no warm-up line in $OUT/bench.log after 300 s" >&2; exit 1; }
ns=$(grep -o 'namespaces jftp[0-9]*' "$OUT/bench.log" | head -1 | cut -d' ' -f2)
# round 1 runs the flannel pair first (bench/pod-throughput.sh rotates the order from there)
for n in a b; do ip netns pids "${ns}$n"; done | while read -r p; do
    grep -q flanneld "/proc/$p/cmdline" 2>/dev/null && echo "$p"; done > "$OUT/pids" || true
[ -s "$OUT/pids" ] || { echo "no flanneld in ${ns}a/${ns}b" >&2; exit 1; }
sleep 4
echo "# perf record -a -g for ${PSECS}s; daemons $(tr '\n' ' ' < "$OUT/pids")"
perf record -F 999 -g -a -o "$OUT/perf.data" -- sleep "$PSECS" > "$OUT/perf-record.log" 2>&1
while read -r p; do jcmd "$p" Compiler.perfmap > /dev/null 2>&1 || echo "jcmd $p Compiler.perfmap failed" >&2; done < "$OUT/pids"
wait "$BENCH"
trap - EXIT
echo "$PSECS" > "$OUT/seconds"
grep -o 'variant=flannel streams=1 round=1 [^ ]* gbit_s=[0-9.]*' "$OUT/bench.log" | sed 's/.*gbit_s=//' > "$OUT/gbit_s"
perf script -i "$OUT/perf.data" -F comm,pid,tid,ip,sym 2>/dev/null > "$OUT/perf.txt"
grep '^throughput' "$OUT/bench.log"
echo "# profile in $OUT: bench/perf-categories.py LABEL=$OUT"
