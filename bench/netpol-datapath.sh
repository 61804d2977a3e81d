#!/usr/bin/env bash
# What --network-policy costs the data path (issue 35): pod-to-pod TCP throughput (iperf3, one stream) and new
# connections per second with their connect times (bench/src/c/tcp-crr.c: connect, 1-byte request, 1-byte answer,
# close; no keep-alive, as netperf's TCP_CRR and kube-network-policies' own benchmark), across two nodes, in three
# pairs of nodes built alike and run interleaved in one run:
#   plain   no rules at all in the nodes (no conntrack)
#   masq    flanneld's --ip-masq rules (iptables nat: what a flannel node has; conntrack on every packet)
#   netpol  masq plus the table flanneld renders with --network-policy for 100 policies that all select both pods,
#           all but the last allowing other peers only, so a new connection's first packet walks every rule of
#           both pods' chains before the last lets it through (org.jflannel.bench.netpol.NetpolTable; with the
#           denied-packet log rules, as flanneld ships them)
# The ratio the issue asks for is netpol against masq ("the same pair without --network-policy").
# Each node: eth0 a veth into a hub bridge (a switched underlay), flannel.1 a kernel VXLAN as flanneld configures it
# (VNI 1, port 8472, a permanent neighbour and FDB entry and an onlink route to the peer), cni0 with one pod (MTU
# 1450), br_netfilter on: the forward hook the table sits on is the one flanneld's own nodes have; flanneld itself
# touches no packet, so the table and conntrack are the whole difference.
#
#   bench/netpol-datapath.sh [SECONDS] [ROUNDS] [POLICIES]     default 10 3 100
#
# Needs root, iperf3, gcc, nft, iptables; builds the bench jar (mvn -Pbench) if missing. Namespaces jfnd<pid>*,
# removed on exit (also on failure).
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "netpol-datapath: needs root" >&2; exit 1; }
SECS=${1:-10}
ROUNDS=${2:-3}
POLICIES=${3:-100}
jar=bench/target/benchmarks.jar
[ -f "$jar" ] || mvn -B -ntp -q -Pbench -pl bench -am package -DskipTests >&2
P="jfnd$$"
D=$(mktemp -d /tmp/netpol-datapath.XXXXXX)
NSS=()
PIDS=()
cleanup() {
    for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
    for n in "${NSS[@]}"; do ip netns del "$n" 2>/dev/null || true; done
    rm -rf "$D"
}
trap cleanup EXIT
mkns() { ip netns add "$1"; NSS+=("$1"); ip -n "$1" link set lo up; }
gcc -O2 -o "$D/tcp-crr" bench/src/c/tcp-crr.c
java -cp "$jar" org.jflannel.bench.netpol.NetpolTable "$D/tables" 10.244.1.2 10.244.2.2 "$POLICIES" 1000 | sed 's/^/# /'
echo "# cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //'); $(nproc) cpus; avx512: $(grep -c avx512f /proc/cpuinfo | head -1 | sed 's/^0$/no/;s/^[1-9].*/yes/'); $(uname -r); $(nft --version); load1 $(cut -d' ' -f1 /proc/loadavg); commit $(git log -1 --format=%h)"

node() { # variant node-ns pod-ns idx peer-idx
    local v=$1 ns=$2 pod=$3 i=$4 j=$5
    ip netns exec "$ns" sysctl -qw net.ipv4.ip_forward=1 net.bridge.bridge-nf-call-iptables=1
    ip -n "$ns" link add flannel.1 type vxlan id 1 dstport 8472 local "192.0.2.$i" dev eth0 nolearning
    ip -n "$ns" link set flannel.1 address "0e:00:00:00:00:0$i" mtu 1450
    ip -n "$ns" addr add "10.244.$i.0/32" dev flannel.1
    ip -n "$ns" link set flannel.1 up
    ip -n "$ns" neigh replace "10.244.$j.0" lladdr "0e:00:00:00:00:0$j" dev flannel.1 nud permanent
    bridge -n "$ns" fdb replace "0e:00:00:00:00:0$j" dev flannel.1 dst "192.0.2.$j" self permanent
    ip -n "$ns" route replace "10.244.$j.0/24" via "10.244.$j.0" dev flannel.1 onlink
    ip -n "$ns" link add cni0 type bridge
    ip -n "$ns" addr add "10.244.$i.1/24" dev cni0
    ip -n "$ns" link set cni0 up
    mkns "$pod"
    ip -n "$ns" link add veth0 mtu 1450 type veth peer name eth0 netns "$pod" mtu 1450
    ip -n "$ns" link set veth0 master cni0 up
    ip -n "$pod" addr add "10.244.$i.2/24" dev eth0
    ip -n "$pod" link set eth0 up
    ip -n "$pod" route add default via "10.244.$i.1"
    if [ "$v" != plain ]; then # flanneld's --ip-masq rules (REFERENCE: FLANNEL-POSTRTG), its FORWARD accepts
        ip netns exec "$ns" iptables-restore <<RULES
*nat
:FLANNEL-POSTRTG - [0:0]
-A POSTROUTING -m comment --comment "flanneld masq" -j FLANNEL-POSTRTG
-A FLANNEL-POSTRTG -m mark --mark 0x4000/0x4000 -m comment --comment "flanneld masq" -j RETURN
-A FLANNEL-POSTRTG -s 10.244.$i.0/24 -d 10.244.0.0/16 -m comment --comment "flanneld masq" -j RETURN
-A FLANNEL-POSTRTG -s 10.244.0.0/16 -d 10.244.$i.0/24 -m comment --comment "flanneld masq" -j RETURN
-A FLANNEL-POSTRTG ! -s 10.244.0.0/16 -d 10.244.$i.0/24 -m comment --comment "flanneld masq" -j RETURN
-A FLANNEL-POSTRTG -s 10.244.0.0/16 ! -d 224.0.0.0/4 -m comment --comment "flanneld masq" -j MASQUERADE --random-fully
-A FLANNEL-POSTRTG ! -s 10.244.0.0/16 -d 10.244.0.0/16 -m comment --comment "flanneld masq" -j MASQUERADE --random-fully
COMMIT
*filter
:FLANNEL-FWD - [0:0]
-A FORWARD -m comment --comment "flanneld forward" -j FLANNEL-FWD
-A FLANNEL-FWD -s 10.244.0.0/16 -m comment --comment "flanneld forward" -j ACCEPT
-A FLANNEL-FWD -d 10.244.0.0/16 -m comment --comment "flanneld forward" -j ACCEPT
COMMIT
RULES
    fi
    [ "$v" != netpol ] || ip netns exec "$ns" nft -f "$D/tables/n$i.nft"
}
VARIANTS=(plain masq netpol)
for v in "${VARIANTS[@]}"; do
    hub="$P${v}h"; a="$P${v}1"; b="$P${v}2"
    mkns "$hub"; mkns "$a"; mkns "$b"
    ip -n "$hub" link add br0 type bridge
    ip -n "$hub" link set br0 up
    for k in 1 2; do
        n="$P$v$k"
        ip -n "$hub" link add "p$k" type veth peer name eth0 netns "$n"
        ip -n "$hub" link set "p$k" master br0 up
        ip -n "$n" addr add "192.0.2.$k/24" dev eth0
        ip -n "$n" link set eth0 up
    done
    node "$v" "$a" "$P${v}p1" 1 2
    node "$v" "$b" "$P${v}p2" 2 1
    ip netns exec "$P${v}p2" iperf3 -s -D -I "$D/iperf-$v.pid" >/dev/null
    ip netns exec "$P${v}p2" "$D/tcp-crr" server 8080 &
    PIDS+=($!)
done
sleep 1
for v in "${VARIANTS[@]}"; do PIDS+=("$(cat "$D/iperf-$v.pid")"); done
for v in "${VARIANTS[@]}"; do # a first connection each (ARP, the FDB), untimed
    ip netns exec "$P${v}p1" "$D/tcp-crr" client 10.244.2.2 8080 0.5 >/dev/null
done
declare -A GBIT CRR C50 C99
for r in $(seq 1 "$ROUNDS"); do
    order=("${VARIANTS[@]}")
    [ $((r % 2)) = 1 ] || order=(netpol masq plain)
    for v in "${order[@]}"; do
        g=$(ip netns exec "$P${v}p1" iperf3 -c 10.244.2.2 -t "$SECS" -J | python3 -c 'import json,sys; print("%.3f" % (json.load(sys.stdin)["end"]["sum_received"]["bits_per_second"] / 1e9))')
        c=$(ip netns exec "$P${v}p1" "$D/tcp-crr" client 10.244.2.2 8080 "$SECS")
        rate=$(sed 's/.* rate=\([0-9]*\).*/\1/' <<<"$c")
        p50=$(sed 's/.*connect_p50_us=\([0-9.]*\).*/\1/' <<<"$c")
        p99=$(sed 's/.*connect_p99_us=\([0-9.]*\).*/\1/' <<<"$c")
        GBIT[$v]+="$g "; CRR[$v]+="$rate "; C50[$v]+="$p50 "; C99[$v]+="$p99 "
        echo "netpol-datapath round=$r variant=$v gbit=$g $c load1=$(cut -d' ' -f1 /proc/loadavg)"
    done
done
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
for v in "${VARIANTS[@]}"; do
    echo "netpol-datapath median variant=$v gbit=$(median <<<"${GBIT[$v]}") conn_per_s=$(median <<<"${CRR[$v]}") connect_p50_us=$(median <<<"${C50[$v]}") connect_p99_us=$(median <<<"${C99[$v]}")"
done
python3 - "$(median <<<"${GBIT[netpol]}")" "$(median <<<"${GBIT[masq]}")" "$(median <<<"${CRR[netpol]}")" "$(median <<<"${CRR[masq]}")" \
    "$(median <<<"${GBIT[plain]}")" "$(median <<<"${CRR[plain]}")" <<'PY'
import sys
g, gm, c, cm, gp, cp = map(float, sys.argv[1:])
print("netpol-datapath ratio netpol/masq throughput=%.3f conn_rate=%.3f   (netpol/plain: %.3f, %.3f)" % (g / gm, c / cm, g / gp, c / cp))
PY
