#!/usr/bin/env bash
# Programs N flannel peer triples (neighbour + FDB + onlink route) on a VXLAN device in a scratch
# network namespace, through jflannel's RtNetlink and through `ip -batch` + `bridge -batch`, and
# prints triples per second for each. Needs root. Usage: bench/netlink-triples.sh [N ...] (default 5000 20000)
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "needs root" >&2; exit 1; }
SIZES=("${@:-5000 20000}"); [ $# -gt 0 ] || SIZES=(5000 20000)

NS="bnch-$$-$RANDOM"
TMP="$(mktemp -d)"
cleanup() { ip netns del "$NS" 2>/dev/null || true; rm -rf "$TMP"; }
trap cleanup EXIT INT TERM

if [ ! -d linux-net/target/test-classes ] || [ ! -d core/target/classes ]; then
    mvn -B -q -pl linux-net -am test-compile >&2
fi
M2="${HOME}/.m2/repository"
JNA="$(ls "$M2"/net/java/dev/jna/jna/5.19.1/jna-5.19.1.jar)"
SLF4J="$(ls "$M2"/org/slf4j/slf4j-api/2.0.17/slf4j-api-2.0.17.jar)"
CP="linux-net/target/test-classes:linux-net/target/classes:core/target/classes:$JNA:$SLF4J"

ip netns add "$NS"
ip -n "$NS" link set lo up
echo "machine: $(nproc) cpus, kernel $(uname -r), $(ip -V), java $(java -version 2>&1 | head -1)"
echo "host neigh gc_thresh1/2/3: $(cat /proc/sys/net/ipv4/neigh/default/gc_thresh{1,2,3} | tr '\n' ' ')(permanent entries are exempt)"

fresh_vxlan() {
    ip -n "$NS" link del flannel.1 2>/dev/null || true
    ip -n "$NS" link del bext0 2>/dev/null || true
    ip -n "$NS" link add bext0 type veth peer name bext0p
    ip -n "$NS" addr add 192.168.0.1/16 dev bext0
    ip -n "$NS" link set bext0 up
    ip -n "$NS" link add flannel.1 mtu 1450 type vxlan id 1 local 192.168.0.1 dev bext0 dstport 8472 nolearning
    ip -n "$NS" addr add 10.0.0.0/32 dev flannel.1
    ip -n "$NS" link set flannel.1 up
}

batch_files() { # same addressing as NetlinkTriplesBench
    python3 - "$1" "$TMP" <<'PY'
import sys
n, tmp = int(sys.argv[1]), sys.argv[2]
with open(f"{tmp}/ip.batch", "w") as ipb, open(f"{tmp}/bridge.batch", "w") as brb:
    for i in range(n):
        a, b = 1 + (i >> 8), i & 255
        subnet = f"10.{a}.{b}.0"
        vtep = f"172.{16 + (i >> 16)}.{(i >> 8) & 255}.{i & 255}"
        mac = "0e:00:00:%02x:%02x:%02x" % ((i >> 16) & 255, (i >> 8) & 255, i & 255)
        ipb.write(f"neigh replace {subnet} lladdr {mac} dev flannel.1 nud permanent\n")
        brb.write(f"fdb replace {mac} dev flannel.1 dst {vtep} self permanent\n")
        ipb.write(f"route replace {subnet}/24 via {subnet} dev flannel.1 onlink\n")
PY
}

run_java() {
    ip -n "$NS" link del flannel.1 2>/dev/null || true
    ip netns exec "$NS" java -cp "$CP" org.jflannel.linuxnet.NetlinkTriplesBench "$1" 2>&1 | grep -v '^SLF4J'
}

run_ip() {
    batch_files "$1"
    fresh_vxlan
    t0=$(date +%s%N)
    ip -n "$NS" -batch "$TMP/ip.batch"          # neighbours and routes
    bridge -n "$NS" -batch "$TMP/bridge.batch"  # FDB entries
    t1=$(date +%s%N)
    got=$(ip -n "$NS" route show dev flannel.1 | grep -c onlink)
    python3 -c "n=$1; s=($t1-$t0)/1e9; print(f'ip-batch N={n} seconds={s:.3f} triples_per_s={n/s:.0f} routes_present=$got')"
}

# The machine is shared, so each size runs twice with the order swapped (ip/java, then java/ip).
ROUNDS="${ROUNDS:-2}"
for N in "${SIZES[@]}"; do
    for r in $(seq 1 "$ROUNDS"); do
        if [ $((r % 2)) = 1 ]; then run_ip "$N"; run_java "$N"; else run_java "$N"; run_ip "$N"; fi
    done
done
