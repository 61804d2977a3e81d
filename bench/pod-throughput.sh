#!/usr/bin/env bash
# (Ran fine under `chrt -f 10`, but see docs/benchmarks.md: prefer `nice -n -10` for anything running flanneld.)
# Pod-to-pod TCP throughput (iperf3) through jflannel's VXLAN beside a hand-configured kernel VXLAN,
# in the same run, on identical topologies. Needs root. Usage:
#   bench/pod-throughput.sh [SECONDS] [ROUNDS]       (default 10 s per iperf3 run, 3 rounds)
#   BACKEND=udp bench/pod-throughput.sh ...          (flannel nodes on the udp backend: flannel0 + the daemon's
#                                                     socket instead of flannel.1; the baseline stays kernel VXLAN)
#   BACKEND=host-gw bench/pod-throughput.sh ...      (flannel nodes on host-gw: a route per peer via its eth0
#                                                     address, no device; the baseline (b) becomes the same
#                                                     plain routed veth path configured by hand: a route to
#                                                     the peer's pod subnet via its eth0 address, pod MTU 1500)
#   BACKEND=ipip bench/pod-throughput.sh ...         (flannel nodes on ipip: flannel.ipip and an onlink route per peer; the
#                                                     baseline stays kernel VXLAN; needs the kernel's ipip module, so on this
#                                                     project's machines only inside tools/kernel-vm, where TCG distorts rates)
#   BACKEND=ipsec bench/pod-throughput.sh ...        (flannel nodes on ipsec: no device, three XFRM policies per peer and
#                                                     Debian's charon per node (JFLANNEL_IPSEC_PRIVATE_RUN), ESP in tunnel
#                                                     mode with the default proposal (AES-128-GCM); each node's default route
#                                                     via its peer, as upstream's ipsec needs; the baseline stays kernel VXLAN
#                                                     (unencrypted); needs ESP, so on this project's machines only inside
#                                                     tools/kernel-vm, where TCG distorts rates)
#   BACKEND=wireguard bench/pod-throughput.sh ...    (flannel nodes on the wireguard backend, userspace mode: flannel-wg, a TUN,
#                                                     and the daemon's WireGuard in Java; runs on Temurin 25 (JAVA=... to
#                                                     override; JDK 17's ChaCha20-Poly1305 is ~3.5x slower) with C2; adds
#                                                     the variant wireguard-go (WGGO=1, default): Debian's wireguard-go
#                                                     in a pair of nodes configured with wg as upstream flanneld does)
#   STREAMS="1 4"                                    (iperf3 -P per run, each measured for flannel and kernel; default 1)
#   JFLANNEL_UDP_GRO=0 ... (and _COALESCE, _QUEUES, _OFFLOAD) reach flanneld through the environment: one
#                                                     udp fast-path technique off per invocation (docs/configuration.md)
#   JFLANNEL_UDP_KERNEL=0                            udp: the packet threads only, no kernel datapath (docs/configuration.md)
#   UNDERLAY=direct                                  the nodes' eth0s joined by one veth pair; default switched: each node's
#                                                     eth0 a veth into one bridge in a hub namespace (hosts behind a switch)
#   UDP_AB=1                                         udp: a second flannel pair (a2) with JFLANNEL_UDP_KERNEL=0 (packet threads
#                                                     only), run interleaved with (a) and (b); (a) keeps JFLANNEL_UDP_KERNEL as
#                                                     given, so JFLANNEL_UDP_KERNEL=1 UDP_AB=1 compares the kernel datapath, the
#                                                     packet threads (the default) and kernel VXLAN in one run
#   WG_AB=1                                          wireguard: a second flannel pair (variant flannel-nooffload) with
#                                                     JFLANNEL_WG_OFFLOAD=0 (no TSO, GSO, GRO: a packet per system call);
#                                                     WG_AB_ENV=VAR=value instead: that variable (variant flannel-b),
#                                                     e.g. WG_AB_ENV=JFLANNEL_WG_CRYPTO_THREADS=0
#   WG_AB_FLANNELD=/path/bin/flanneld                wireguard, with WG_AB=1: the second pair (variant flannel-b) runs that
#                                                     launcher (another build: before/after in one run; its own flanneld/target),
#                                                     with WG_AB_ENV too when given
#   UDP_AB_ENV="VAR=value ..."                      udp: the second pair (variant flannel-b) gets these variables instead of
#                                                     JFLANNEL_UDP_KERNEL=0, e.g. a switch's A/B against (a) in one run
#   UDP_AB_FLANNELD=/path/bin/flanneld               udp: the second pair (flannel-b) runs that launcher (another build:
#                                                     before/after in one run), with UDP_AB_ENV too when given
#   UDP_AB2_ENV="VAR=value ..."                     udp with UDP_AB=1, or wireguard with WG_AB=1: a third flannel pair (variant flannel-c) with these
#                                                     variables, interleaved with the others (a three-way A/B in one run)
#   WARMUP=SECONDS                                   an untimed iperf3 run through each flannel pair first (the daemons' JIT warm, as
#                                                     in a long-running node; default 0)
#   IPERF_AFFINITY=0,1                               iperf3 -A: client on CPU 0, server on CPU 1 (steadier, both variants)
#   FLANNELD_JAVA_OPTS=...                           extra JVM options for flanneld
#   FLANNELD_JIT=c1|c2                               flanneld's JIT (bin/flanneld) forced; unset (default) the daemon's
#                                                     own choice, as shipped (issue 40): c2 for udp and userspace wireguard
# Every run also reports CPU: cpu_busy = busy cores of the whole machine during the run (/proc/stat), and for
# the flannel variants cpu_fa/cpu_fb = cores used by the two flanneld processes; each also per Gbit/s.
#
# (a) flannel: node namespaces A and B joined by a veth underlay (192.0.2.1/.2, MTU 1500), a real
#     etcd in A, a real flanneld (bin/flanneld, --ip-masq, as kube-flannel runs it) in each node, and
#     one pod per node attached through our CNI plugin (bin/flannel → Debian's bridge + host-local).
# (b) kernel: node namespaces C and D, the same veth underlay, a VXLAN device configured by hand
#     (`ip link add vx42 type vxlan id 42 dstport 4789 nolearning`, MTU 1450, like flannel.1) with a
#     static neighbour, FDB entry and onlink route to the peer, and one pod per node behind a bridge
#     with a veth (MTU 1450), the shape the bridge plugin builds.
# (a') NOMASQ=1 (default): (a) in a second pair of nodes with its own etcd, flanneld without --ip-masq and
#     the CNI delegate given "ipMasq": false: no nat table, so no conntrack, as in (b).
# (c) diagnostic (IPT=1, default): (b) plus a copy of the iptables rules that flanneld and the CNI
#     chain installed in A and B, to tell the rules' cost from the VXLAN configuration's.
# Then ROUNDS rounds of `iperf3 -c <peer pod> -t SECONDS` from pod to pod, (a) and (b) interleaved
# (order swapped every round). One line per run, then the medians and their ratio.
# Everything lives in namespaces jftp<id>*, removed on exit (also on failure or Ctrl-C).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
[ "$(id -u)" = 0 ] || { echo "needs root" >&2; exit 1; }
SECS=${1:-10}
ROUNDS=${2:-3}
BACKEND=${BACKEND:-vxlan}
case $BACKEND in vxlan) DEV=flannel.1 ;; udp) DEV=flannel0 ;; host-gw) DEV=eth0 ;; wireguard) DEV=flannel-wg ;; ipip) DEV=flannel.ipip ;;
    ipsec) DEV=eth0 ;; # no device of its own: ESP leaves by eth0
    *) echo "BACKEND: expected vxlan, udp, host-gw, wireguard, ipip or ipsec, got $BACKEND" >&2; exit 1 ;; esac
PSK=$(printf 'bench-psk-%.0s' $(seq 1 10)) # ipsec: upstream's minimum is 96 characters
if [ "$BACKEND" = wireguard ]; then
    # the userspace WireGuard seals and opens every packet in the daemon: C2 (the daemon's own choice), and a
    # JDK with the ChaCha20-Poly1305 intrinsics (Temurin 25, as the image ships; JDK 17's are ~3.5x slower)
    # the launcher's heap as the overlay ships it (the intrinsic AEAD allocates nothing per packet; give
    # FLANNELD_JAVA_OPTS="-Xms24m -Xmn16m" for a daemon on the Cipher fallback, docs/configuration.md)
    T25=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java
    [ -n "${JAVA:-}" ] || [ ! -x "$T25" ] || export JAVA=$T25
fi
WGGO=${WGGO:-$([ "$BACKEND" = wireguard ] && echo 1 || echo 0)}
ID=$(printf '%05d' $(( (RANDOM * 32768 + RANDOM) % 100000 )))
P="jftp$ID"                     # namespaces: ${P}a ${P}b (flannel nodes), ${P}pa ${P}pb (their pods),
D=$(mktemp -d "/tmp/jflannel-bench-$P.XXXX")   # ${P}c ${P}d (kernel nodes), ${P}pc ${P}pd (their pods)
PIDS=()
FL_PIDS=()   # flanneld: (a) A B, then (a') G H
NSS=()
STREAMS=${STREAMS:-1}

cleanup() {
    set +e
    for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null; done
    for pid in "${PIDS[@]}"; do
        for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -KILL "$pid" 2>/dev/null
    done
    for ns in "${NSS[@]}"; do ip netns del "$ns" 2>/dev/null; done
    [ -n "${KEEP:-}" ] && echo "kept $D" >&2 || rm -rf "$D"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

mkns() { ip netns add "$1"; NSS+=("$1"); ip -n "$1" link set lo up; }
nsx() { local ns=$1; shift; ip netns exec "$ns" "$@"; }
[ -e /dev/fd ] || ln -s /proc/self/fd /dev/fd   # tools/kernel-vm's guest has no /dev/fd (the process substitutions below need it)
wait_for() { # description, seconds (times WAIT_SCALE, default 1: e.g. 5 in tools/kernel-vm under TCG), command...
    local what=$1 secs=$(( $2 * ${WAIT_SCALE:-1} )); shift 2
    local end=$((SECONDS + secs))
    until "$@" >/dev/null 2>&1; do
        [ $SECONDS -lt $end ] || { echo "timeout after ${secs}s: $what" >&2; return 1; }
        sleep 0.1
    done
}

UNDERLAY=${UNDERLAY:-switched}
case $UNDERLAY in switched|direct) ;; *) echo "UNDERLAY: expected switched or direct, got $UNDERLAY" >&2; exit 1 ;; esac
HUBS=0
underlay() { # nsX nsY: eth0 192.0.2.1/24 and eth0 192.0.2.2/24, both nodes forwarding
    mkns "$1"; mkns "$2"
    if [ "$UNDERLAY" = switched ]; then
        # hosts behind a switch: each node's eth0 is a veth whose other end is a port of one bridge in a hub namespace
        local hub="${P}s$HUBS"; HUBS=$((HUBS + 1))
        mkns "$hub"
        ip -n "$hub" link add br0 type bridge
        ip -n "$hub" link set br0 up
        ip -n "$hub" link add p1 type veth peer name eth0 netns "$1"
        ip -n "$hub" link add p2 type veth peer name eth0 netns "$2"
        ip -n "$hub" link set p1 master br0 up
        ip -n "$hub" link set p2 master br0 up
    else
        ip -n "$1" link add eth0 type veth peer name eth0 netns "$2"
    fi
    ip -n "$1" addr add 192.0.2.1/24 dev eth0; ip -n "$1" link set eth0 up
    ip -n "$2" addr add 192.0.2.2/24 dev eth0; ip -n "$2" link set eth0 up
    nsx "$1" sysctl -qw net.ipv4.ip_forward=1; nsx "$2" sysctl -qw net.ipv4.ip_forward=1
}

echo "# cpu: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') (family $(grep -m1 '^cpu family' /proc/cpuinfo | cut -d: -f2 | tr -d ' ') model $(grep -m1 '^model[[:space:]]*:' /proc/cpuinfo | cut -d: -f2 | tr -d ' ')); $(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -cE '^avx512') avx512 flags, $(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -xE 'avx2|vaes|vpclmulqdq|avx512vl|avx512f' | tr '\n' ' ')(the JDK's ChaCha20/Poly1305 intrinsics differ with AVX-512); flanneld JVM's $(${JAVA:-java} ${FLANNELD_JAVA_OPTS:-} -XX:+PrintFlagsFinal -version 2>/dev/null | awk '$2=="UseAVX"{print "UseAVX=" $4}')${FLANNELD_JAVA_OPTS:+ (FLANNELD_JAVA_OPTS=$FLANNELD_JAVA_OPTS)}"
echo "# machine: $(nproc) cpus, kernel $(uname -r), $(java -version 2>&1 | head -1), $(iperf3 --version | head -1)"
echo "# commit $(git log -1 --format='%h %s'); namespaces ${P}*; load1 at start $(cut -d' ' -f1 /proc/loadavg); backend $BACKEND; underlay $UNDERLAY; flanneld JIT ${FLANNELD_JIT:-auto}; flanneld JVM: $(${JAVA:-java} -version 2>&1 | head -1)"

# ---------------- (a) flannel: etcd + two flanneld + CNI plugin ----------------
flannel_pair() { # nsX nsY dir ipmasq(1/0) [VAR=value...]: etcd in X, flanneld in both (--ip-masq when 1, the variables in its environment)
    local x=$1 y=$2 dir=$3 masq=$4 n
    shift 4
    underlay "$x" "$y"
    mkdir -p "$dir"
    ip netns exec "$x" etcd --data-dir "$dir/etcd" --listen-client-urls http://192.0.2.1:2379,http://127.0.0.1:2379 \
        --advertise-client-urls http://192.0.2.1:2379 --listen-peer-urls http://127.0.0.1:2380 >"$dir/etcd.log" 2>&1 &
    PIDS+=($!)
    wait_for "etcd in $x" 30 nsx "$x" etcdctl --endpoints=http://127.0.0.1:2379 endpoint health
    nsx "$x" etcdctl --endpoints=http://127.0.0.1:2379 put /coreos.com/network/config \
        "{\"Network\":\"10.244.0.0/16\",\"Backend\":{\"Type\":\"$BACKEND\"$([ "$BACKEND" = ipsec ] && echo ",\"PSK\":\"$PSK\"")}}" >/dev/null
    if [ "$BACKEND" = ipsec ]; then # upstream's ipsec adds no routes: the pod subnets go by the default route, then the policies
        ip -n "$x" route replace default via 192.0.2.2
        ip -n "$y" route replace default via 192.0.2.1
    fi
    for n in "$x" "$y"; do
        mkdir -p "$dir/$n"
        # WIREGUARD_KEY_FILE: each node its own key (the default /run/flannel/wgkey is shared by all namespaces);
        # ipsec: each node its own charon, its pidfile, socket and conf in the node's directory (a private /run)
        ip netns exec "$n" env WIREGUARD_KEY_FILE="$dir/$n/wgkey" \
            $([ "$BACKEND" = ipsec ] && echo "JFLANNEL_IPSEC_DIR=$dir/$n/ipsec JFLANNEL_IPSEC_PRIVATE_RUN=1") \
            "$@" "${PAIR_FLANNELD:-$ROOT/bin/flanneld}" --etcd-endpoints=http://192.0.2.1:2379 --iface=eth0 \
            $([ "$BACKEND" = udp ] || [ "$BACKEND" = wireguard ] && echo --healthz-port=8081) \
            $([ "$masq" = 1 ] && echo --ip-masq) --subnet-file="$dir/$n/subnet.env" >"$dir/$n/flanneld.log" 2>&1 &
        PIDS+=($!)
        FL_PIDS+=($!)
    done
    PAIR_PIDS="${FL_PIDS[*]: -2}"
    for n in "$x" "$y"; do
        wait_for "flanneld $n subnet.env" 90 test -s "$dir/$n/subnet.env"
        if [ "$BACKEND" = vxlan ]; then
            wait_for "flanneld $n route to its peer" 60 sh -c "ip -n $n route show dev flannel.1 | grep -q onlink"
        elif [ "$BACKEND" = host-gw ]; then
            wait_for "flanneld $n route to its peer" 60 sh -c "ip -n $n route show dev eth0 | grep -q '^10\.244\..* via 192\.0\.2\.'"
        elif [ "$BACKEND" = ipip ]; then
            wait_for "flanneld $n route to its peer" 60 sh -c "ip -n $n route show dev flannel.ipip | grep -q onlink"
        elif [ "$BACKEND" = ipsec ]; then
            wait_for "flanneld $n policies for its peer" 60 sh -c "[ \$(ip -n $n xfrm policy | grep -c 'tmpl src') -ge 3 ]"
            wait_for "ESP SAs on $n (IKE done)" 120 sh -c "ip -n $n xfrm state | grep -q 'proto esp'"
        else
            wait_for "flanneld $n $DEV" 60 ip -n "$n" link show "$DEV"
        fi
    done
}
A=${P}a; B=${P}b; PA=${P}pa; PB=${P}pb
flannel_pair "$A" "$B" "$D/masq" 1
PIDS_A=$PAIR_PIDS

cni_add() { # node-ns pod-ns node-dir delegate-extra → prints the pod's IPv4 address (runs in a subshell: no mkns here)
    local conf out
    conf=$(printf '{"cniVersion":"0.3.1","name":"cbr0","type":"flannel","delegate":{"hairpinMode":true,"isDefaultGateway":true%s},"subnetFile":"%s","dataDir":"%s","ipam":{"dataDir":"%s"}}' \
        "$4" "$3/subnet.env" "$3/flannel" "$3/ipam")
    out=$(nsx "$1" env CNI_COMMAND=ADD CNI_CONTAINERID="$2" CNI_NETNS="/run/netns/$2" CNI_IFNAME=eth0 \
        CNI_PATH=/usr/lib/cni "$ROOT/bin/flannel" <<<"$conf" 2>>"$3/cni.log")
    python3 -c 'import json,sys; print([i["address"] for i in json.load(sys.stdin)["ips"] if "." in i["address"]][0].split("/")[0])' <<<"$out"
}
mkns "$PA"; mkns "$PB"
IPA=$(cni_add "$A" "$PA" "$D/masq/$A" "")
IPB=$(cni_add "$B" "$PB" "$D/masq/$B" "")
# two nodes holding the same subnet would route pod to pod inside one node (no overlay at all)
[ "${IPA%.*}" != "${IPB%.*}" ] || { echo "nodes $A and $B got the same subnet (${IPA%.*}.0): not measuring" >&2; exit 1; }

# ---------------- (a') flannel without masquerading (NOMASQ=1, default) ----------------
# flanneld without --ip-masq and the CNI delegate told "ipMasq": false (a documented flannel setup for
# clusters that NAT egress elsewhere): no nat table in the node, so no conntrack, like the hand-made
# baseline (b). Our VXLAN against the kernel's with the same netfilter state.
NOMASQ=${NOMASQ:-1}
if [ "$NOMASQ" = 1 ]; then
    G=${P}g; H=${P}h; PG=${P}pg; PH=${P}ph
    flannel_pair "$G" "$H" "$D/nomasq" 0
    PIDS_N=$PAIR_PIDS
    mkns "$PG"; mkns "$PH"
    IPG=$(cni_add "$G" "$PG" "$D/nomasq/$G" ',"ipMasq":false')
    IPH=$(cni_add "$H" "$PH" "$D/nomasq/$H" ',"ipMasq":false')
    echo "# flannel-nomasq: nat rules in node $G: $(nsx "$G" iptables-save -t nat | grep -c '^-A' || true)"
fi

# ---------------- (a2) udp A/B (UDP_AB=1): (a) again with the packet threads only ----------------
UDP_AB=${UDP_AB:-0}
WG_AB=${WG_AB:-0}
[ "$UDP_AB" = 0 ] || [ "$BACKEND" = udp ] || { echo "UDP_AB=1 needs BACKEND=udp" >&2; exit 1; }
[ "$WG_AB" = 0 ] || [ "$BACKEND" = wireguard ] || { echo "WG_AB=1 needs BACKEND=wireguard" >&2; exit 1; }
AB_NAME=flannel-threads; AB_ENV=JFLANNEL_UDP_KERNEL=0
if [ "$BACKEND" = udp ] && [ -n "${UDP_AB_ENV:-}${UDP_AB_FLANNELD:-}" ]; then # udp: any other variant as (a2)
    UDP_AB=1; AB_NAME=flannel-b; AB_ENV=${UDP_AB_ENV:-UDP_AB=1}
    echo "# variant $AB_NAME: ${UDP_AB_FLANNELD:-$ROOT/bin/flanneld} with $AB_ENV"
fi
if [ "$WG_AB" = 1 ]; then # wireguard: the second pair without the batching (one packet per system call)
    UDP_AB=1; AB_NAME=flannel-nooffload; AB_ENV=JFLANNEL_WG_OFFLOAD=0
    [ -z "${WG_AB_ENV:-}" ] || { AB_NAME=flannel-b; AB_ENV=$WG_AB_ENV; }
    [ -z "${WG_AB_FLANNELD:-}" ] || { AB_NAME=flannel-b; AB_ENV=${WG_AB_ENV:-WG_AB=1}; }
    echo "# variant $AB_NAME: ${WG_AB_FLANNELD:-$ROOT/bin/flanneld} with $AB_ENV"
fi
if [ "$UDP_AB" = 1 ]; then
    J=${P}j; K=${P}k; PJ=${P}pj; PK=${P}pk
    # shellcheck disable=SC2086 # AB_ENV: one or more VAR=value words
    PAIR_FLANNELD=${WG_AB_FLANNELD:-${UDP_AB_FLANNELD:-}} flannel_pair "$J" "$K" "$D/threads" 1 $AB_ENV
    PIDS_T=$PAIR_PIDS
    mkns "$PJ"; mkns "$PK"
    IPJ=$(cni_add "$J" "$PJ" "$D/threads/$J" "")
    IPK=$(cni_add "$K" "$PK" "$D/threads/$K" "")
fi
UDP_AB2_ENV=${UDP_AB2_ENV:-}
if [ -n "$UDP_AB2_ENV" ]; then # udp or wireguard: a third pair (variant flannel-c) with these variables, e.g. a three-way A/B
    [ "$UDP_AB" = 1 ] || { echo "UDP_AB2_ENV needs BACKEND=udp and UDP_AB=1, or BACKEND=wireguard and WG_AB=1" >&2; exit 1; }
    L=${P}l; M=${P}m; PL=${P}pl; PM=${P}pm
    echo "# variant flannel-c: $ROOT/bin/flanneld with $UDP_AB2_ENV"
    # shellcheck disable=SC2086 # one or more VAR=value words
    flannel_pair "$L" "$M" "$D/c" 1 $UDP_AB2_ENV
    PIDS_C=$PAIR_PIDS
    mkns "$PL"; mkns "$PM"
    IPL=$(cni_add "$L" "$PL" "$D/c/$L" "")
    IPM=$(cni_add "$M" "$PM" "$D/c/$M" "")
fi

# ---------------- (b) kernel baseline: the same shape, configured by hand ----------------
C=${P}c; DD=${P}d; PC=${P}pc; PD=${P}pd
underlay "$C" "$DD"
kernel_node() { # node-ns pod-ns local-ip own-idx peer-ip peer-idx
    local ns=$1 pod=$2 lip=$3 i=$4 pip=$5 j=$6
    ip -n "$ns" link add vx42 type vxlan id 42 dstport 4789 local "$lip" dev eth0 nolearning
    ip -n "$ns" link set vx42 address "0e:00:00:00:00:0$i" mtu 1450
    ip -n "$ns" addr add "10.245.$i.0/32" dev vx42
    ip -n "$ns" link set vx42 up
    ip -n "$ns" neigh replace "10.245.$j.0" lladdr "0e:00:00:00:00:0$j" dev vx42 nud permanent
    bridge -n "$ns" fdb replace "0e:00:00:00:00:0$j" dev vx42 dst "$pip" self permanent
    ip -n "$ns" route replace "10.245.$j.0/24" via "10.245.$j.0" dev vx42 onlink
    ip -n "$ns" link add cni0 type bridge
    ip -n "$ns" addr add "10.245.$i.1/24" dev cni0
    ip -n "$ns" link set cni0 up
    mkns "$pod"
    ip -n "$ns" link add veth0 mtu 1450 type veth peer name eth0 netns "$pod" mtu 1450
    ip -n "$ns" link set veth0 master cni0 up
    ip -n "$pod" addr add "10.245.$i.2/24" dev eth0
    ip -n "$pod" link set eth0 up
    ip -n "$pod" route add default via "10.245.$i.1"
}
routed_node() { # host-gw by hand: same args as kernel_node; the peer's pod subnet via its eth0 address, no device
    local ns=$1 pod=$2 i=$4 pip=$5 j=$6
    ip -n "$ns" route replace "10.245.$j.0/24" via "$pip" dev eth0
    ip -n "$ns" link add cni0 type bridge
    ip -n "$ns" addr add "10.245.$i.1/24" dev cni0
    ip -n "$ns" link set cni0 up
    mkns "$pod"
    ip -n "$ns" link add veth0 type veth peer name eth0 netns "$pod"
    ip -n "$ns" link set veth0 master cni0 up
    ip -n "$pod" addr add "10.245.$i.2/24" dev eth0
    ip -n "$pod" link set eth0 up
    ip -n "$pod" route add default via "10.245.$i.1"
}
[ "$BACKEND" != host-gw ] || kernel_node() { routed_node "$@"; }
kernel_node "$C" "$PC" 192.0.2.1 1 192.0.2.2 2
kernel_node "$DD" "$PD" 192.0.2.2 2 192.0.2.1 1
IPD=10.245.2.2

# ---------------- (w) wireguard-go (WGGO=1): Debian's userspace WireGuard, configured as upstream flanneld does ----------------
# Nodes W and X: wireguard-go on a device of its own (a unique name: its control socket lives in
# /var/run/wireguard, shared by all namespaces), then with wg and iproute2 what upstream's wireguard
# backend does (REFERENCE §15): private key, ListenPort 51820, the node's subnet address /32 on the
# device, MTU 1500 - 80, the route of the whole Network through it, the peer with its public key,
# endpoint PublicIP:51820 and allowed IPs its subnet; pods behind a bridge as in (b), MTU 1420.
if [ "$WGGO" = 1 ]; then
    W=${P}w; X=${P}x; PW=${P}pw; PX=${P}px
    underlay "$W" "$X"
    GO_PIDS=""
    mkdir -p "$D/wggo"
    for i in 1 2; do
        ns=$([ $i = 1 ] && echo "$W" || echo "$X")
        wg genkey >"$D/wggo/key$i"; wg pubkey <"$D/wggo/key$i" >"$D/wggo/pub$i"
        ip netns exec "$ns" wireguard-go -f "wg${ID}n$i" >"$D/wggo/wireguard-go$i.log" 2>&1 &
        PIDS+=($!); GO_PIDS="$GO_PIDS $!"
        wait_for "wireguard-go in $ns" 20 nsx "$ns" wg show "wg${ID}n$i"
    done
    wggo_node() { # node-ns pod-ns own-idx peer-ip peer-idx
        local ns=$1 pod=$2 i=$3 pip=$4 j=$5 dev="wg${ID}n$3"
        nsx "$ns" wg set "$dev" private-key "$D/wggo/key$i" listen-port 51820
        ip -n "$ns" addr add "10.246.$i.0/32" dev "$dev"
        ip -n "$ns" link set "$dev" mtu 1420 up
        ip -n "$ns" route add 10.246.0.0/16 dev "$dev"
        nsx "$ns" wg set "$dev" peer "$(cat "$D/wggo/pub$j")" endpoint "$pip:51820" allowed-ips "10.246.$j.0/24" persistent-keepalive 0
        ip -n "$ns" link add cni0 type bridge
        ip -n "$ns" addr add "10.246.$i.1/24" dev cni0
        ip -n "$ns" link set cni0 up
        mkns "$pod"
        ip -n "$ns" link add veth0 mtu 1420 type veth peer name eth0 netns "$pod" mtu 1420
        ip -n "$ns" link set veth0 master cni0 up
        ip -n "$pod" addr add "10.246.$i.2/24" dev eth0
        ip -n "$pod" link set eth0 up
        ip -n "$pod" route add default via "10.246.$i.1"
    }
    wggo_node "$W" "$PW" 1 192.0.2.2 2
    wggo_node "$X" "$PX" 2 192.0.2.1 1
    GO_PIDS=${GO_PIDS# }
fi

# ---------------- (c) diagnostic: (b) plus the iptables rules flanneld and the CNI chain put into A and B ----------------
# Same hand-made VXLAN as (b) in a third pair of namespaces, with A's and B's `iptables-save` restored
# into them (subnets renamed). Separates the cost of the rules (nat table → conntrack on every packet)
# from the VXLAN configuration itself. IPT=0 skips it.
IPT=${IPT:-1}
if [ "$IPT" = 1 ]; then
    E=${P}e; F=${P}f; PE=${P}pe; PF=${P}pf
    underlay "$E" "$F"
    kernel_node "$E" "$PE" 192.0.2.1 1 192.0.2.2 2
    kernel_node "$F" "$PF" 192.0.2.2 2 192.0.2.1 1
    subnet_prefix() { sed -n 's/^FLANNEL_SUBNET=\([0-9]*\.[0-9]*\.[0-9]*\.\).*/\1/p' "$1"; }
    SA=$(subnet_prefix "$D/masq/$A/subnet.env"); SB=$(subnet_prefix "$D/masq/$B/subnet.env")
    rename() { sed -e "s/${SA//./\\.}/10.245.1./g; s/${SB//./\\.}/10.245.2./g; s#10\.244\.0\.0/16#10.245.0.0/16#g"; }
    nsx "$A" iptables-save | rename | nsx "$E" iptables-restore
    nsx "$B" iptables-save | rename | nsx "$F" iptables-restore
    echo "# iptables rules in flannel node A: $(nsx "$A" iptables-save | grep -c '^-A'); copied to $E: $(nsx "$E" iptables-save | grep -c '^-A') ($(nsx "$E" iptables-save | grep -c 10.245) naming 10.245.x)"
fi

echo "# flannel: pod $PA $IPA -> pod $PB $IPB; kernel: pod $PC 10.245.1.2 -> pod $PD $IPD"
echo "# $DEV: $(ip -n "$A" -d -o link show "$DEV" | tr -s ' \\' ' ')"
[ "$BACKEND" != ipsec ] || echo "# ipsec SAs on $A: $(ip -n "$A" xfrm state | grep -E '^src|proto esp|aead|enc |encap' | tr -s '\t\n' '  ' | sed 's/0x[0-9a-f]\{16,\}/<key>/g')"
[ "$BACKEND" = host-gw ] && echo "# routes: flannel $A: $(ip -n "$A" route show dev eth0 | grep via | tr '\n' ';') kernel $C: $(ip -n "$C" route show dev eth0 | grep via | tr '\n' ';')" \
    || echo "# vx42:      $(ip -n "$C" -d -o link show vx42 | tr -s ' \\' ' ')"
echo "# pod eth0 mtu: flannel $(ip -n "$PA" -o link show eth0 | grep -o 'mtu [0-9]*'), kernel $(ip -n "$PC" -o link show eth0 | grep -o 'mtu [0-9]*')"
if command -v ethtool >/dev/null; then
    off() { ip netns exec "$1" ethtool -k "$2" | grep -E '^(tx-checksumming|scatter-gather|tcp-segmentation-offload|generic-segmentation-offload|generic-receive-offload|tx-udp_tnl-segmentation):' | tr -s ' \n' ' '; }
    echo "# offloads $DEV: $(off "$A" "$DEV")"
    [ "$BACKEND" = host-gw ] || echo "# offloads vx42:      $(off "$C" vx42)"
fi
wait_for "flannel pods ping each other" 30 nsx "$PA" ping -c 1 -W 1 "$IPB" # udp: peers are applied asynchronously
nsx "$PC" ping -c 2 -W 2 "$IPD" >/dev/null || { echo "kernel-baseline pods cannot ping each other" >&2; exit 1; }
[ "$IPT" != 1 ] || nsx "$PE" ping -c 2 -W 2 "$IPD" >/dev/null || { echo "kernel+iptables pods cannot ping each other" >&2; exit 1; }
[ "$NOMASQ" != 1 ] || wait_for "flannel-nomasq pods ping each other" 30 nsx "$PG" ping -c 1 -W 1 "$IPH"
[ "$UDP_AB" != 1 ] || wait_for "flannel-threads pods ping each other" 30 nsx "$PJ" ping -c 1 -W 1 "$IPK"
[ "$WGGO" != 1 ] || wait_for "wireguard-go pods ping each other" 30 nsx "$PW" ping -c 1 -W 1 10.246.2.2

ip netns exec "$PB" iperf3 -s -p 5201 >/dev/null 2>&1 & PIDS+=($!)
ip netns exec "$PD" iperf3 -s -p 5201 >/dev/null 2>&1 & PIDS+=($!)
wait_for "iperf3 servers" 10 sh -c "ip netns exec $PB ss -ltn | grep -q :5201 && ip netns exec $PD ss -ltn | grep -q :5201"
if [ "$IPT" = 1 ]; then
    ip netns exec "$PF" iperf3 -s -p 5201 >/dev/null 2>&1 & PIDS+=($!)
    wait_for "iperf3 server (c)" 10 sh -c "ip netns exec $PF ss -ltn | grep -q :5201"
fi
if [ "$UDP_AB" = 1 ]; then
    ip netns exec "$PK" iperf3 -s -p 5201 >/dev/null 2>&1 & PIDS+=($!)
    wait_for "iperf3 server (a2)" 10 sh -c "ip netns exec $PK ss -ltn | grep -q :5201"
fi
if [ -n "$UDP_AB2_ENV" ]; then
    wait_for "flannel-c pods ping each other" 30 nsx "$PL" ping -c 1 -W 1 "$IPM"
    ip netns exec "$PM" iperf3 -s -p 5201 >/dev/null 2>&1 & PIDS+=($!)
    wait_for "iperf3 server (a3)" 10 sh -c "ip netns exec $PM ss -ltn | grep -q :5201"
fi
if [ "$WGGO" = 1 ]; then
    ip netns exec "$PX" iperf3 -s -p 5201 >/dev/null 2>&1 & PIDS+=($!)
    wait_for "iperf3 server (w)" 10 sh -c "ip netns exec $PX ss -ltn | grep -q :5201"
fi
if [ "$NOMASQ" = 1 ]; then
    ip netns exec "$PH" iperf3 -s -p 5201 >/dev/null 2>&1 & PIDS+=($!)
    wait_for "iperf3 server (a')" 10 sh -c "ip netns exec $PH ss -ltn | grep -q :5201"
fi

R_F=(); R_K=(); R_I=(); R_N=()
busy() { awk '/^cpu /{print $2+$3+$4+$7+$8, $2+$3+$4+$5+$6+$7+$8}' /proc/stat; }   # busy total (jiffies)
ptime() { awk '{print $14+$15}' "/proc/$1/stat" 2>/dev/null || echo 0; }            # utime+stime of a pid
run() { # variant client-ns server-ip round streams ["flanneld-pid-a flanneld-pid-b"]
    local json gbps retr b0 t0 b1 t1 fa0=0 fb0=0 fa1=0 fb1=0 cpu extra=""
    set -- "$1" "$2" "$3" "$4" "$5" ${6:-}
    read -r b0 t0 < <(busy)
    [ -z "${6:-}" ] || { fa0=$(ptime "$6"); fb0=$(ptime "$7"); }
    json=$(timeout $((SECS + 30)) ip netns exec "$2" iperf3 -c "$3" -p 5201 -t "$SECS" -P "$5" ${IPERF_AFFINITY:+-A "$IPERF_AFFINITY"} -J)
    read -r b1 t1 < <(busy)
    [ -z "${6:-}" ] || { fa1=$(ptime "$6"); fb1=$(ptime "$7"); }
    read -r gbps retr < <(python3 -c 'import json,sys; e=json.load(sys.stdin)["end"]; print("%.3f %d" % (e["sum_received"]["bits_per_second"]/1e9, e["sum_sent"].get("retransmits",0)))' <<<"$json")
    cpu=$(python3 -c "n=$(nproc); b=($b1-$b0)/max(1,$t1-$t0)*n; g=max($gbps,0.001); print('cpu_busy=%.2f cpu_busy_per_gbit=%.3f' % (b, b/g))")
    if [ -n "${6:-}" ]; then
        extra=" $(python3 -c "import os; hz=os.sysconf('SC_CLK_TCK'); s=$SECS; g=max($gbps,0.001); a=($fa1-$fa0)/hz/s; b=($fb1-$fb0)/hz/s; print('cpu_fa=%.2f cpu_fb=%.2f cpu_fa_per_gbit=%.3f cpu_fb_per_gbit=%.3f' % (a, b, a/g, b/g))")"
    fi
    echo "throughput variant=$1 streams=$5 round=$4 seconds=$SECS gbit_s=$gbps retransmits=$retr $cpu$extra load1=$(cut -d' ' -f1 /proc/loadavg)" | tee -a "$D/results"
    if [ "$5" = "${STREAMS%% *}" ]; then # the summary's medians: the first stream count
        case $1 in flannel) R_F+=("$gbps") ;; kernel) R_K+=("$gbps") ;; flannel-nomasq) R_N+=("$gbps") ;; kernel+iptables) R_I+=("$gbps") ;; esac
    fi
}
WARMUP=${WARMUP:-0}
if [ "$WARMUP" -gt 0 ]; then # untimed: every flannel pair carries traffic once before anything is measured
    timeout $((WARMUP + 30)) ip netns exec "$PA" iperf3 -c "$IPB" -p 5201 -t "$WARMUP" >/dev/null || true
    [ "$UDP_AB" != 1 ] || timeout $((WARMUP + 30)) ip netns exec "$PJ" iperf3 -c "$IPK" -p 5201 -t "$WARMUP" >/dev/null || true
    [ -z "$UDP_AB2_ENV" ] || timeout $((WARMUP + 30)) ip netns exec "$PL" iperf3 -c "$IPM" -p 5201 -t "$WARMUP" >/dev/null || true
    [ "$NOMASQ" != 1 ] || timeout $((WARMUP + 30)) ip netns exec "$PG" iperf3 -c "$IPH" -p 5201 -t "$WARMUP" >/dev/null || true
    echo "# warm-up: ${WARMUP}s through each flannel pair, untimed; load1 $(cut -d' ' -f1 /proc/loadavg)"
fi
for r in $(seq 1 "$ROUNDS"); do
    for st in $STREAMS; do
        # the flannel variants and the kernel baseline, interleaved; the order rotates every round
        order=(flannel kernel)
        [ "$UDP_AB" != 1 ] || order+=("$AB_NAME")
        [ -z "$UDP_AB2_ENV" ] || order+=(flannel-c)
        [ "$WGGO" != 1 ] || order+=(wireguard-go)
        [ "$NOMASQ" != 1 ] || order+=(flannel-nomasq)
        [ "$IPT" != 1 ] || order+=(kernel+iptables)
        n=${#order[@]}
        for ((i = 0; i < n; i++)); do
            v=${order[$(( (i + r - 1) % n ))]}
            case $v in
                flannel) run flannel "$PA" "$IPB" "$r" "$st" "$PIDS_A" ;;
                kernel) run kernel "$PC" "$IPD" "$r" "$st" ;;
                flannel-threads|flannel-nooffload|flannel-b) run "$v" "$PJ" "$IPK" "$r" "$st" "$PIDS_T" ;;
                flannel-c) run flannel-c "$PL" "$IPM" "$r" "$st" "$PIDS_C" ;;
                wireguard-go) run wireguard-go "$PW" 10.246.2.2 "$r" "$st" "$GO_PIDS" ;;
                flannel-nomasq) run flannel-nomasq "$PG" "$IPH" "$r" "$st" "$PIDS_N" ;;
                kernel+iptables) run kernel+iptables "$PE" "$IPD" "$r" "$st" ;;
            esac
        done
    done
done
if [ "$BACKEND" = udp ]; then # where the udp backend lost packets: TUN queue, socket buffers, the daemon's own drops
    # Each pair's ledger from one moment: the peer probes (two echoes and two replies each way per round) are real
    # traffic, so two nodes read a few hundred ms apart can differ by a round; node X is read again after Y until it
    # did not move in between (docs/configuration.md, the udp metrics).
    sent_received() { # ns → "sent received": datagrams to and from peers, kernel datapath and packet threads
        nsx "$1" python3 -c 'import re,urllib.request
m=urllib.request.urlopen("http://127.0.0.1:8081/metrics").read().decode()
n=lambda d:sum(float(v) for v in re.findall(r"^flanneld_udp(?:_kernel)?_packets_total\{direction=\"%s\"\} (\S+)" % d,m,re.M))
print("%d %d" % (n("to_peers"), n("from_peers")))'
    }
    ledger() { # nsX nsY
        local x1 y x2 try
        for try in 1 2 3 4 5; do
            x1=$(sent_received "$1"); y=$(sent_received "$2"); x2=$(sent_received "$1")
            [ "$x1" != "$x2" ] || break
            sleep 0.3
        done
        read -r xs xr <<<"$x1"; read -r ys yr <<<"$y"
        echo "# ledger $1->$2 sent=$xs received=$yr; $2->$1 sent=$ys received=$xr; $([ "$x1" = "$x2" ] && echo "one moment (try $try)" || echo "still moving after $try tries")"
    }
    ledger "$A" "$B"; [ -z "${J:-}" ] || ledger "$J" "$K"; [ -z "${L:-}" ] || ledger "$L" "$M"
    for n in "$A" "$B" ${J:+"$J" "$K"} ${L:+"$L" "$M"}; do
        echo "# $n flannel0: $(ip -n "$n" -s -o link show flannel0 | tr -s ' \\' ' ' | grep -o 'RX:.*')"
        echo "# $n udp: $(nsx "$n" cat /proc/net/snmp | awk '/^Udp:/{if(h){for(i=2;i<=NF;i++)printf "%s=%s ",k[i],$i}else{h=1;for(i=2;i<=NF;i++)k[i]=$i}}')"
        echo "# $n metrics: $(nsx "$n" python3 -c 'import urllib.request;print(urllib.request.urlopen("http://127.0.0.1:8081/metrics").read().decode())' | grep '^flanneld_udp' | tr '\n' ' ')"
    done
fi
if [ "$BACKEND" = wireguard ]; then # where the wireguard variants lost packets: TUN queue, socket buffers
    for n in "$A" "$B" ${J:+"$J" "$K"} ${W:+"$W" "$X"}; do
        dev=$DEV; [ "$n" != "${W:-}" ] || dev="wg${ID}n1"; [ "$n" != "${X:-}" ] || dev="wg${ID}n2"
        echo "# $n $dev: $(ip -n "$n" -s -o link show "$dev" | tr -s ' \\' ' ' | grep -o 'RX:.*')"
        echo "# $n udp: $(nsx "$n" cat /proc/net/snmp | awk '/^Udp:/{if(h){for(i=2;i<=NF;i++)printf "%s=%s ",k[i],$i}else{h=1;for(i=2;i<=NF;i++)k[i]=$i}}')"
    done
fi
python3 - "${R_F[*]}" "${R_K[*]}" "${R_I[*]:-}" "${R_N[*]:-}" <<'PY'
import statistics, sys
f = [float(x) for x in sys.argv[1].split()]; k = [float(x) for x in sys.argv[2].split()]
i = [float(x) for x in sys.argv[3].split()]
n = [float(x) for x in sys.argv[4].split()]
mf, mk = statistics.median(f), statistics.median(k)
print("throughput summary flannel_median_gbit_s=%.3f kernel_median_gbit_s=%.3f ratio=%.3f flannel_runs=%s kernel_runs=%s"
      % (mf, mk, mf / mk, ",".join("%.2f" % x for x in f), ",".join("%.2f" % x for x in k)))
if i:
    mi = statistics.median(i)
    print("throughput summary kernel+iptables_median_gbit_s=%.3f ratio_flannel_to_it=%.3f ratio_it_to_kernel=%.3f runs=%s"
          % (mi, mf / mi, mi / mk, ",".join("%.2f" % x for x in i)))
if n:
    mn = statistics.median(n)
    print("throughput summary flannel-nomasq_median_gbit_s=%.3f ratio_nomasq_to_kernel=%.3f runs=%s"
          % (mn, mn / mk, ",".join("%.2f" % x for x in n)))
PY
python3 - "$D/results" <<'PY'
import collections, statistics, sys
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    kv = dict(f.split("=", 1) for f in line.split()[1:] if "=" in f)
    rows[(kv["variant"], int(kv["streams"]))].append(kv)
def med(rs, k):
    v = [float(r[k]) for r in rs if k in r]
    return statistics.median(v) if v else float("nan")
for (variant, streams), rs in sorted(rows.items()):
    k = rows.get(("kernel", streams))
    ratio = med(rs, "gbit_s") / med(k, "gbit_s") if k else float("nan")
    extra = ""
    if "cpu_fa" in rs[0]:
        extra = " cpu_fa=%.2f cpu_fb=%.2f cpu_fa_per_gbit=%.3f cpu_fb_per_gbit=%.3f" % tuple(
            med(rs, x) for x in ("cpu_fa", "cpu_fb", "cpu_fa_per_gbit", "cpu_fb_per_gbit"))
    print("throughput median variant=%s streams=%d gbit_s=%.3f ratio_to_kernel=%.3f retransmits=%d cpu_busy=%.2f cpu_busy_per_gbit=%.3f%s runs=%s load1=%s"
          % (variant, streams, med(rs, "gbit_s"), ratio, med(rs, "retransmits"), med(rs, "cpu_busy"), med(rs, "cpu_busy_per_gbit"),
             extra, ",".join(r["gbit_s"] for r in rs), ",".join(r["load1"] for r in rs)))
PY
