#!/usr/bin/env bash
# Enforcement latency of --network-policy (issue 35): API write -> the node's nftables table loaded with the change,
# p50/p99 over CHANGES changes, at PODS pods and POLICIES policies (org.jflannel.bench.netpol.NetpolLatency says how).
#
#   bench/netpol-latency.sh [PODS POLICIES CHANGES ...]     default: 1000 100 60, then 10000 1000 60
#
# Needs root (a throwaway network namespace for nft), nftables; builds the bench jar (mvn -Pbench) if missing.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "netpol-latency: needs root" >&2; exit 1; }
jar=bench/target/benchmarks.jar
[ -f "$jar" ] || mvn -B -ntp -q -Pbench -pl bench -am package -DskipTests >&2
[ $# -eq 0 ] && set -- 1000 100 60 10000 1000 60
ns="jfnpl$$"
ip netns add "$ns"
trap 'ip netns del "$ns" 2>/dev/null || true' EXIT
echo "# cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'); $(nproc) cpus; $(nft --version); $(java -version 2>&1 | head -1); load1 $(cut -d' ' -f1 /proc/loadavg); commit $(git log -1 --format=%h)"
while [ $# -ge 3 ]; do
  java -Xmx2g -cp "$jar" org.jflannel.bench.netpol.NetpolLatency "$ns" "$1" "$2" "$3"
  shift 3
done
