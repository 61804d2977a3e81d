#!/usr/bin/env bash
# Programs N flannel peer triples (neighbour + FDB + onlink route) on a VXLAN device in a scratch
# network namespace, through jflannel's RtNetlink and through `ip -batch` + `bridge -batch`, and
# prints triples per second for each; also RtNetlink.batch() (pipelined). Needs root. Usage: bench/netlink-triples.sh [N ...] (default 5000 20000)
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

run_java() { # N [triples|pairs|pipelined|pipelined-pairs]
    ip -n "$NS" link del flannel.1 2>/dev/null || true
    ip netns exec "$NS" java -cp "$CP" org.jflannel.linuxnet.netlink.NetlinkTriplesBench "$1" 2000 "${2:-triples}" 2>&1 | grep -v '^SLF4J'
}

run_ip() { # N [pairs]
    batch_files "$1"
    [ "${2:-}" != pairs ] || sed -i '/^route /d' "$TMP/ip.batch"
    fresh_vxlan
    # wall time and the children's CPU time (user + kernel), like the Java side reports
    python3 - "$1" "$NS" "$TMP" "${2:-triples}" <<'PY'
import resource, subprocess, sys, time
n, ns, tmp, what = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
t0 = time.monotonic()
subprocess.run(["ip", "-n", ns, "-batch", f"{tmp}/ip.batch"], check=True)            # neighbours and routes
subprocess.run(["bridge", "-n", ns, "-batch", f"{tmp}/bridge.batch"], check=True)    # FDB entries
wall = time.monotonic() - t0
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = ru.ru_utime + ru.ru_stime
routes = subprocess.run(["ip", "-n", ns, "route", "show", "dev", "flannel.1"], capture_output=True, text=True).stdout.count("onlink")
print(f"ip-batch{'-pairs' if what == 'pairs' else ''} N={n} wall_s={wall:.3f} triples_per_s={n/wall:.0f} cpu_s={cpu:.3f} triples_per_cpu_s={n/cpu:.0f} routes_present={routes}")
PY
}

# Diagnostic: the same routes through nexthop objects (one per peer, route -> nhid). The kernel
# hashes a route's fib_info by device, not by gateway, so flannel's N onlink routes via N gateways
# on one device share one hash bucket and each insert walks it (O(N) per route, O(N^2) in all);
# a nexthop id is part of the hash, which breaks the chain. Not what flannel programs.
run_nexthop() {
    python3 - "$1" "$TMP" <<'PY'
import sys
n, tmp = int(sys.argv[1]), sys.argv[2]
with open(f"{tmp}/nh.batch", "w") as f:
    for i in range(n):
        s = f"10.{1 + (i >> 8)}.{i & 255}.0"
        f.write(f"nexthop add id {i + 1} via {s} dev flannel.1 onlink\nroute replace {s}/24 nhid {i + 1}\n")
PY
    fresh_vxlan
    python3 - "$1" "$NS" "$TMP" <<'PY'
import resource, subprocess, sys, time
n, ns, tmp = int(sys.argv[1]), sys.argv[2], sys.argv[3]
t0 = time.monotonic()
subprocess.run(["ip", "-n", ns, "-batch", f"{tmp}/nh.batch"], check=True)
wall = time.monotonic() - t0
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
cpu = ru.ru_utime + ru.ru_stime
print(f"diagnostic ip-batch-routes-via-nexthop-objects N={n} wall_s={wall:.3f} routes_per_s={n/wall:.0f} cpu_s={cpu:.3f}")
PY
    ip -n "$NS" link del flannel.1
    ip -n "$NS" nexthop flush >/dev/null 2>&1 || true
}

# The machine is shared, so each size runs twice with the order swapped (ip/java, then java/ip).
ROUNDS="${ROUNDS:-2}"
for N in "${SIZES[@]}"; do
    for r in $(seq 1 "$ROUNDS"); do
        if [ $((r % 2)) = 1 ]; then run_ip "$N"; run_java "$N"; else run_java "$N"; run_ip "$N"; fi
    done
    # neighbour + FDB only: our request path against iproute2's without the kernel's route insertion
    run_ip "$N" pairs; run_java "$N" pairs
    # the same through RtNetlink.batch(): all neighbours + FDB entries pipelined, then all routes
    if [ "${PIPELINED:-1}" = 1 ]; then run_java "$N" pipelined; run_java "$N" pipelined-pairs; fi
    [ "${NEXTHOP:-1}" = 0 ] || run_nexthop "$N"
done
