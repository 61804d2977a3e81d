#!/bin/bash
# Issue 18's mixed udp pair by hand (root): node A runs etcd and first our flanneld, node B ours; both with
# --ip-masq, FLANNELD_JIT=c2 and JFLANNEL_UDP_KERNEL (default 1 here: the kernel datapath), pods made by
# bin/flannel; then A is switched to upstream flanneld v0.20.2 with its lease kept, and iperf3 runs from B's
# pod to A's (ours -> upstream) and back, printing B's udp counters around the first run.
#
#   UNDERLAY=switched|direct  the nodes' eth0 behind one bridge in a hub namespace (default), or one veth pair
#   START_UPSTREAM=1          A runs upstream from the start (no switch)
#   SIG=TERM|KILL             how ours on A is stopped for the switch (default TERM)
#   FORGE=1                   then A's lease is rewritten (its etcd lease kept) to claim {"KernelDecap":true}
#   SECS=10 PAR=<streams>     iperf3 duration and parallel streams
#   ROOT=<dir>                the jflannel tree whose bin/flanneld and bin/flannel run (default: this one), e.g. a
#                             worktree at an older commit
# Namespaces jfmp<id>*, removed on exit; every wait is bounded.
set -u
[ "$(id -u)" = 0 ] || { echo "needs root" >&2; exit 1; }
ROOT=${ROOT:-$(cd "$(dirname "$0")/.." && pwd)}
UP=${UPSTREAM_FLANNELD:-${JFLANNEL_UPSTREAM_DIR:+$JFLANNEL_UPSTREAM_DIR/flanneld}}
[ -x "$UP" ] || { echo "udp-mixed-pair: skipped: needs upstream flanneld v0.20.2: set JFLANNEL_UPSTREAM_DIR to a folder holding flanneld (or UPSTREAM_FLANNELD to the binary)${UP:+; no executable $UP}" >&2; exit 0; }
export JFLANNEL_UDP_KERNEL=${JFLANNEL_UDP_KERNEL:-1}
SECS=${SECS:-10}
export FLANNELD_JIT=${FLANNELD_JIT:-c2}
ID=$(printf '%05d' $(( (RANDOM * 32768 + RANDOM) % 100000 )))
P="jfmp$ID"; A=${P}a; B=${P}b; H=${P}h; PA=${P}pa; PB=${P}pb
D=$(mktemp -d /tmp/jflannel-mixed-$P.XXXX); echo "# logs in $D (kept); load1 $(cut -d" " -f1 /proc/loadavg)"
PIDS=(); NSS=()
cleanup() { set +e; for p in "${PIDS[@]}"; do kill -TERM "$p" 2>/dev/null; done; sleep 1
  for p in "${PIDS[@]}"; do kill -KILL "$p" 2>/dev/null; done; for n in "${NSS[@]}"; do ip netns del "$n" 2>/dev/null; done; }
trap cleanup EXIT
mkns() { ip netns add "$1"; NSS+=("$1"); ip -n "$1" link set lo up; }
nsx() { local n=$1; shift; ip netns exec "$n" "$@"; }
wait_for() { local what=$1 secs=$2; shift 2; local end=$((SECONDS+secs)); until "$@" >/dev/null 2>&1; do
  [ $SECONDS -lt $end ] || { echo "timeout: $what" >&2; exit 1; }; sleep 0.1; done; }
mkns $A; mkns $B
if [ "${UNDERLAY:-switched}" = direct ]; then
  ip -n $A link add eth0 type veth peer name eth0 netns $B
  ip -n $A addr add 192.0.2.1/24 dev eth0; ip -n $B addr add 192.0.2.2/24 dev eth0
  for n in $A $B; do ip -n $n link set eth0 up; nsx $n sysctl -qw net.ipv4.ip_forward=1; done
else
mkns $H
ip -n $H link add br0 type bridge; ip -n $H link set br0 up
i=1; for n in $A $B; do
  ip -n $n link add eth0 type veth peer name p$i netns $H; ip -n $H link set p$i master br0; ip -n $H link set p$i up
  ip -n $n addr add 192.0.2.$i/24 dev eth0; ip -n $n link set eth0 up; nsx $n sysctl -qw net.ipv4.ip_forward=1; i=$((i+1)); done
fi
ip netns exec $A etcd --data-dir $D/etcd --listen-client-urls http://192.0.2.1:2379,http://127.0.0.1:2379 --advertise-client-urls http://192.0.2.1:2379 --listen-peer-urls http://127.0.0.1:2380 >$D/etcd.log 2>&1 &
PIDS+=($!)
wait_for etcd 30 nsx $A etcdctl --endpoints=http://127.0.0.1:2379 endpoint health
nsx $A etcdctl --endpoints=http://127.0.0.1:2379 put /coreos.com/network/config '{"Network":"10.244.0.0/16","Backend":{"Type":"udp"}}' >/dev/null
start() { # ns bin log
  ip netns exec $1 "$2" --etcd-endpoints=http://192.0.2.1:2379 --iface=eth0 --ip-masq --subnet-file=$D/$1.env $( [ "$2" = "$UP" ] || echo --healthz-port=8081) >>$3 2>&1 &
  PIDS+=($!); LASTPID=$!; }
if [ "${START_UPSTREAM:-0}" = 1 ]; then start $A $UP $D/A.log; else start $A $ROOT/bin/flanneld $D/A.log; fi; PID_A=$LASTPID
start $B $ROOT/bin/flanneld $D/B.log
wait_for A-env 90 test -s $D/$A.env; wait_for B-env 90 test -s $D/$B.env
cni_add() { local conf out
  conf=$(printf '{"cniVersion":"0.3.1","name":"cbr0","type":"flannel","delegate":{"hairpinMode":true,"isDefaultGateway":true},"subnetFile":"%s","dataDir":"%s","ipam":{"dataDir":"%s"}}' $D/$1.env $D/$1-fl $D/$1-ipam)
  out=$(nsx $1 env CNI_COMMAND=ADD CNI_CONTAINERID=$2 CNI_NETNS=/run/netns/$2 CNI_IFNAME=eth0 CNI_PATH=/usr/lib/cni $ROOT/bin/flannel <<<"$conf" 2>>$D/cni.log)
  python3 -c 'import json,sys; print([i["address"] for i in json.load(sys.stdin)["ips"] if "." in i["address"]][0].split("/")[0])' <<<"$out"; }
mkns $PA; mkns $PB
IPA=$(cni_add $A $PA); IPB=$(cni_add $B $PB); echo "pods A=$IPA B=$IPB"
wait_for "pods ping" 30 nsx $PB ping -c1 -W1 $IPA
if [ "${START_UPSTREAM:-0}" != 1 ] && [ "${SWITCH:-1}" = 1 ]; then
  kill -${SIG:-TERM} $PID_A; wait $PID_A 2>/dev/null; wait_for "port free" 30 sh -c "! ip netns exec $A ss -uln | grep -q :8285"; echo "--- switched to upstream" >>$D/A.log
  start $A $UP $D/A.log
  wait_for "B sees A's new lease" 60 grep -q "kernelDecap=false" $D/B.log
fi
if [ "${FORGE:-0}" = 1 ]; then # A's lease claims KernelDecap although A (upstream) decapsulates nothing in its kernel
  k=$(nsx $A etcdctl --endpoints=http://127.0.0.1:2379 get --prefix /coreos.com/network/subnets/ --keys-only | grep -v '^$' | while read -r key; do v=$(nsx $A etcdctl --endpoints=http://127.0.0.1:2379 get --print-value-only "$key"); case $v in *'"192.0.2.1"'*) echo "$key";; esac; done)
  v=$(nsx $A etcdctl --endpoints=http://127.0.0.1:2379 get --print-value-only "$k")
  nv=$(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); d["BackendData"]={"KernelDecap":True}; print(json.dumps(d))' "$v")
  lid=$(nsx $A etcdctl --endpoints=http://127.0.0.1:2379 get "$k" -w json | python3 -c 'import json,sys; print("%x" % json.load(sys.stdin)["kvs"][0].get("lease",0))')
  echo "forging $k: $v -> $nv (lease $lid)"
  nsx $A etcdctl --endpoints=http://127.0.0.1:2379 put ${lid:+--lease=$lid} "$k" "$nv" >/dev/null
  wait_for "B sees the forged lease" 30 sh -c "grep 'publicIp=192.0.2.1' $D/B.log | tail -1 | grep -q kernelDecap=true"
fi
grep -i "kernel\|lease" $D/B.log | tail -5
echo "ping B->A: $(nsx $PB ping -c3 -i0.2 -W1 $IPA | grep -o '[0-9]* received')  A->B: $(nsx $PA ping -c3 -i0.2 -W1 $IPB | grep -o '[0-9]* received')"
for pn in $PA $PB; do ip netns exec $pn iperf3 -s -p 5201 >$D/iperf3-server-$pn.log 2>&1 & PIDS+=($!); done
wait_for "iperf3 servers" 10 sh -c "ip netns exec $PA ss -ltn | grep -q :5201 && ip netns exec $PB ss -ltn | grep -q :5201"
m() { curl -s http://127.0.0.1:8081/metrics | grep -E '^flanneld_udp' | sed 's/flanneld_udp_//' | tr '\n' ' '; }
ip3() { timeout $((SECS+20)) ip netns exec $1 iperf3 -c $2 -t $SECS ${PAR:+-P $PAR} -J > $D/$3.json 2>&1
  echo "$3: $(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); e=j.get("end",{}); print(j.get("error",""), round(e.get("sum_received",{}).get("bytes",0)/1e6,1), "MB", round(e.get("sum_received",{}).get("bits_per_second",0)/1e9,2), "Gbit/s retr", e.get("sum_sent",{}).get("retransmits"))' $D/$3.json 2>&1 | tail -1)"; }
echo "B metrics before: $(nsx $B sh -c "$(declare -f m); m")"
ip3 $PB $IPA ours-to-upstream
echo "B metrics after: $(nsx $B sh -c "$(declare -f m); m")"
ip3 $PA $IPB upstream-to-ours
echo "A flannel0: $(ip -n $A -s link show flannel0 | tr -s ' \n' ' ')"

