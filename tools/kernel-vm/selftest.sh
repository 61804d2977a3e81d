#!/usr/bin/env bash
# Proves tools/kernel-vm/run.sh against a real kernel WireGuard: boots the VM and, inside it,
# joins two network namespaces with a veth pair, puts a wireguard device in each (ip link add
# ... type wireguard; keys, port, peer, endpoint and allowed-ips with wg set), pings across the
# tunnel over IPv4 and IPv6 and prints wg show. Passes (exit 0) only if both pings get through and
# wg show reports a latest handshake on both sides. Also times java -version in the guest.
#
#   tools/kernel-vm/selftest.sh [--timeout SECONDS]     (default 300)
#
# All traffic stays inside the VM, which has no network card; the addresses are documentation
# ranges (192.0.2.0/24 under the tunnel, 198.51.100.0/24 and 2001:db8:1::/64 in it).
set -euo pipefail

if [[ ${1:-} != --in-guest ]]; then
    here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
    timeout_s=300
    if [[ ${1:-} == --timeout ]]; then timeout_s=${2:?--timeout needs a value}; fi
    start=${EPOCHREALTIME/,/.}
    rc=0
    "$here/run.sh" -v --timeout "$timeout_s" -- "$here/selftest.sh" --in-guest || rc=$?
    end=${EPOCHREALTIME/,/.}
    awk -v a="$start" -v b="$end" -v rc="$rc" \
        'BEGIN { printf "selftest: %s, exit %d, %.1fs on the host, boot included\n", rc ? "FAIL" : "PASS", rc, b - a }'
    exit "$rc"
fi

# ---- in the guest, as root ---------------------------------------------------------------------
step() { printf '\n== %s\n' "$*"; }
elapsed() { awk -v a="$1" -v b="${EPOCHREALTIME/,/.}" 'BEGIN { printf "%.2f", b - a }'; }

step "guest: kernel $(uname -r), uptime $(cut -d' ' -f1 /proc/uptime)s at command start"

for java in /usr/lib/jvm/temurin-25-jdk-amd64/bin/java /usr/lib/jvm/java-17-openjdk-amd64/bin/java; do
    if [[ -x $java ]]; then
        step "$java -version"
        t=${EPOCHREALTIME/,/.}
        "$java" -version 2>&1
        echo "took $(elapsed "$t")s"
    fi
done

step "WireGuard between two namespaces"
t_wg=${EPOCHREALTIME/,/.}
umask 077
keys=$(mktemp -d)
ip netns add kvmA
ip netns add kvmB
ip link add vethA netns kvmA type veth peer name vethB netns kvmB
ip -n kvmA addr add 192.0.2.1/24 dev vethA
ip -n kvmB addr add 192.0.2.2/24 dev vethB
for ns in kvmA kvmB; do
    ip -n "$ns" link set lo up
    ip -n "$ns" link set "veth${ns#kvm}" up
    ip -n "$ns" link add wg0 type wireguard
    wg genkey >"$keys/$ns.key"
    wg pubkey <"$keys/$ns.key" >"$keys/$ns.pub"
done
ip netns exec kvmA wg set wg0 listen-port 51820 private-key "$keys/kvmA.key" \
    peer "$(cat "$keys/kvmB.pub")" endpoint 192.0.2.2:51821 \
    allowed-ips 198.51.100.2/32,2001:db8:1::2/128 persistent-keepalive 0
ip netns exec kvmB wg set wg0 listen-port 51821 private-key "$keys/kvmB.key" \
    peer "$(cat "$keys/kvmA.pub")" endpoint 192.0.2.1:51820 \
    allowed-ips 198.51.100.1/32,2001:db8:1::1/128
ip -n kvmA addr add 198.51.100.1/24 dev wg0
ip -n kvmB addr add 198.51.100.2/24 dev wg0
ip -n kvmA addr add 2001:db8:1::1/64 dev wg0 nodad
ip -n kvmB addr add 2001:db8:1::2/64 dev wg0 nodad
ip -n kvmA link set wg0 up
ip -n kvmB link set wg0 up
ip -n kvmA -d link show wg0

fail=0
step "ping 198.51.100.2 through the tunnel"
ip netns exec kvmA ping -c 3 -i 0.2 -W 3 198.51.100.2 || fail=1
step "ping 2001:db8:1::2 through the tunnel"
ip netns exec kvmA ping -6 -c 3 -i 0.2 -W 3 2001:db8:1::2 || fail=1

for ns in kvmA kvmB; do
    step "wg show in $ns"
    ip netns exec "$ns" wg show
    hs=$(ip netns exec "$ns" wg show wg0 latest-handshakes | awk '{ print $2 }')
    if [[ ${hs:-0} == 0 ]]; then
        echo "no handshake in $ns"
        fail=1
    fi
    ip netns exec "$ns" wg show wg0 transfer
done
echo "WireGuard part took $(elapsed "$t_wg")s"

rm -rf "$keys"
ip netns del kvmA
ip netns del kvmB
exit "$fail"
