#!/usr/bin/env bash
# CNI ADD/DEL latency: Debian's bridge plugin alone (a) beside our flannel plugin delegating to the
# same bridge (b), interleaved in one run, in a throwaway node namespace (deleted on exit).
# Prints the median per operation and the plugin's own cost, b - a.
#
#   bench/cni-latency.sh [N]             N ADD+DEL cycles per variant (default 30)
#   VARIANTS=all bench/cni-latency.sh    also (c) bin/flannel's flags without the AppCDS archive, (d) plain
#                                        `java -cp`, (e) AppCDS with C1 + SerialGC instead of -Xint + G1
#   VARIANTS=abf bench/cni-latency.sh    (f) the image's self-contained bundle as a node gets it: unpacked from
#                                        packaging/target/jflannel-image.oci.tar (bin/image), installed by the
#                                        image's `flanneld install-cni-plugin` into /opt/cni/bin (removed again on
#                                        exit, unless a flannel was there before: then the bench refuses), run
#                                        with JAVA_HOME unset and no JDK on PATH (Temurin 25 jlink, java.base,
#                                        its AppCDS archive dumped for /opt/cni/bin). Needs skopeo and umoci.
#   VARIANTS=afg bench/cni-latency.sh    (g) the same installed bundle through the POSIX sh launcher it had
#                                        before issue 20 (the host's glibc): the one-file launcher's own cost
#   VARIANTS=afFu bench/cni-latency.sh   (F) the same installed plugin file with its fast path (issue 37): a warm
#                                        CniServer (flanneld's code for it, run alone: java -cp cni-flannel.jar
#                                        org.jflannel.cni.CniServer) on $work/cni.sock serves the request and the
#                                        launcher runs bridge itself; no JVM starts. The server's CPU per call is
#                                        counted in F's CPU. (f) is then the fallback: the socket is absent.
#   STORM=100 VARIANTS=afF ...           also 100 ADDs at once (100 pod namespaces), then 100 DELs at once, per
#                                        variant: wall time and CPU of the whole batch (F: the server's included)
#   VARIANTS=afu bench/cni-latency.sh    (u) upstream's Go plugin, $JFLANNEL_UPSTREAM_DIR/flannel (v1.9.1), same config
#                                        and bridge: the figure to compare the plugin's own cost with
#
# On a shared, busy machine run it as `chrt -f 10 bench/cni-latency.sh` (SCHED_FIFO) to approximate
# a quiet one; CPU times are printed too and depend little on the load.
# Needs root, iproute2 and /usr/lib/cni (containernetworking-plugins). Builds the plugin if needed.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-30}
VARIANTS=${VARIANTS:-ab}
ROOT=$(pwd)
[ "$(id -u)" = 0 ] || { echo "cni-latency: needs root" >&2; exit 1; }
[ -x /usr/lib/cni/bridge ] || { echo "cni-latency: /usr/lib/cni/bridge missing (apt-get install containernetworking-plugins)" >&2; exit 1; }
T=$ROOT/cni-flannel/target
[ -f "$T/cni-flannel.jar" ] && [ -f "$T/flannel.jsa" ] || mvn -q -pl cni-flannel -am package -DskipTests >&2

suffix=$(printf '%06x' $((RANDOM * 32768 + RANDOM)))
NODE=bn$suffix POD=bp$suffix BR=bb$suffix
work=$(mktemp -d)
installed=()
cleanup() {
  ip netns del "$POD" 2>/dev/null || true; ip netns del "$NODE" 2>/dev/null || true
  for f in "${installed[@]}"; do rm -rf "$f"; done
  [ -n "${made_cni_dir:-}" ] && rmdir /opt/cni/bin /opt/cni 2>/dev/null || true
  if [ -n "${server_pid:-}" ]; then # its counters: served, told to fall back
    kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null || true
    grep '^cni-server' "$work/server.log" >&2 || true
  fi
  for i in $(seq "${STORM:-0}"); do ip netns del "$POD-$i" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
ip netns add "$NODE"; ip netns add "$POD"
ip -n "$NODE" link set lo up

printf 'FLANNEL_NETWORK=10.244.0.0/16\nFLANNEL_SUBNET=10.244.1.1/24\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n' > "$work/subnet.env"
FLANNEL_CONF="{\"cniVersion\":\"0.3.1\",\"name\":\"cbr0\",\"type\":\"flannel\",\"delegate\":{\"bridge\":\"$BR\",\"hairpinMode\":true,\"isDefaultGateway\":true},\"ipam\":{\"dataDir\":\"$work/ipam\"},\"subnetFile\":\"$work/subnet.env\",\"dataDir\":\"$work/flannel\"}"
# what flannel hands to bridge (checked below against the scratch file), so (a) does the same work
BRIDGE_CONF="{\"bridge\":\"$BR\",\"cniVersion\":\"0.3.1\",\"hairpinMode\":true,\"ipMasq\":false,\"ipam\":{\"dataDir\":\"$work/ipam\",\"ranges\":[[{\"subnet\":\"10.244.1.0/24\"}]],\"routes\":[{\"dst\":\"10.244.0.0/16\"}],\"type\":\"host-local\"},\"isDefaultGateway\":true,\"isGateway\":true,\"mtu\":1450,\"name\":\"cbr0\",\"type\":\"bridge\"}"

UPSTREAM=${JFLANNEL_UPSTREAM_DIR:+$JFLANNEL_UPSTREAM_DIR/flannel}
if [[ "$VARIANTS" == *u* && ! -x "$UPSTREAM" ]]; then
  echo "cni-latency: variant u skipped: needs upstream's Go CNI plugin v1.9.1: set JFLANNEL_UPSTREAM_DIR to a folder holding flannel${UPSTREAM:+ (no executable $UPSTREAM)}" >&2
  VARIANTS=${VARIANTS//u/}
fi
export CNI_CONTAINERID=bench$suffix CNI_NETNS=/run/netns/$POD CNI_IFNAME=eth0 CNI_PATH=/usr/lib/cni
JAR=$T/cni-flannel.jar
FAST="-Xint -XX:-UsePerfData -Xss512k"
cmd_for() {
  case $1 in
    a) echo "/usr/lib/cni/bridge" ;;
    b) echo "$ROOT/bin/flannel" ;;
    c) echo "java $FAST -cp $JAR org.jflannel.cni.Main" ;;
    d) echo "java -cp $JAR org.jflannel.cni.Main" ;;
    f) echo "env -u JAVA_HOME PATH=/usr/sbin:/sbin JFLANNEL_CNI_SOCKET=$work/absent.sock /opt/cni/bin/flannel" ;;
    F) echo "env -u JAVA_HOME PATH=/usr/sbin:/sbin JFLANNEL_CNI_SOCKET=$work/cni.sock JFLANNEL_CNI_DATA_DIR=$work/flannel /opt/cni/bin/flannel" ;;
    g) echo "env -u JAVA_HOME PATH=/usr/sbin:/sbin /opt/cni/bin/flannel-sh" ;;
    u) echo "$UPSTREAM" ;;
    e) echo "java -XX:TieredStopAtLevel=1 -XX:+UseSerialGC -XX:-UsePerfData -Xshare:auto -XX:SharedArchiveFile=$T/flannel.jsa -cp $JAR org.jflannel.cni.Main" ;;
  esac
}
conf_for() { if [ "$1" = a ]; then echo "$BRIDGE_CONF"; else echo "$FLANNEL_CONF"; fi; }
list=(a b); [ "$VARIANTS" = all ] && list=(a b c d e)
[ "$VARIANTS" != all ] && [ "$VARIANTS" != ab ] && read -r -a list <<<"$(echo "$VARIANTS" | sed 's/./& /g')"
if [[ " ${list[*]} " == *" f "* || " ${list[*]} " == *" g "* || " ${list[*]} " == *" F "* ]]; then
  image=$ROOT/packaging/target/jflannel-image.oci.tar
  [ -f "$image" ] || { echo "cni-latency: $image missing (bin/image)" >&2; exit 1; }
  [ ! -e /opt/cni/bin/flannel ] || { echo "cni-latency: /opt/cni/bin/flannel exists; (f) would replace it" >&2; exit 1; }
  [ -d /opt/cni/bin ] || made_cni_dir=1
  mkdir -p "$work/img" /opt/cni/bin
  tar -xf "$image" -C "$work/img"
  tag=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["manifests"][0]["annotations"]["org.opencontainers.image.ref.name"])' "$work/img/index.json")
  # the image's layers are zstd, which umoci 0.4 cannot read: skopeo writes a gzip copy (as ImageRootfs does)
  skopeo --insecure-policy copy --quiet --dest-compress-format=gzip "oci:$work/img:$tag" "oci:$work/img-gzip:$tag"
  umoci unpack --image "$work/img-gzip:$tag" "$work/bundle" >/dev/null
  before=$(ls -A /opt/cni/bin)
  unshare --mount --propagation private -- sh -c 'r=$1; mkdir -p "$r/opt/cni/bin"; mount -t proc proc "$r/proc"; mount --rbind /dev "$r/dev"; mount --bind /opt/cni/bin "$r/opt/cni/bin"; exec chroot "$r" /opt/jflannel/bin/flanneld install-cni-plugin /opt/cni/bin' sh "$work/bundle/rootfs" >&2
  for f in $(ls -A /opt/cni/bin); do
    case " $before " in *" $f "*) ;; *) installed+=("/opt/cni/bin/$f") ;; esac
  done
  # (g): the same installed bundle through the launcher it had before issue 20 (POSIX sh, the host's
  # glibc loader, the JDK's default process launching), to compare the one-file launcher with
  bdir=$(ls -d /opt/cni/bin/jflannel-*/ | head -n 1)
  printf '#!/bin/sh\ndir=%s\nexec "$dir/jre/bin/java" -Xint -XX:-UsePerfData -Xss512k -XX:+UseSerialGC -Xms8m -Xmx64m -XX:AOTCache="$dir/flannel.aot" -Xlog:disable -Xlog:all=warning:stderr -Djdk.lang.Process.launchMechanism=FORK -Djdk.reflect.useNativeAccessorOnly=true -cp "$dir/cni-flannel.jar" org.jflannel.cni.Main\n' \
    "${bdir%/}" > /opt/cni/bin/flannel-sh
  chmod 0755 /opt/cni/bin/flannel-sh
  installed+=(/opt/cni/bin/flannel-sh)
fi

if [[ " ${list[*]} " == *" F "* ]]; then
  # the daemon's side, in the host's namespace as flanneld (hostNetwork), on the image's flanneld runtime
  # (Temurin 25 jlink) with this tree's plugin jar and core, and flanneld's JVM options for its heap and JIT
  sjava=$work/bundle/rootfs/opt/jflannel/jre/bin/java
  "$sjava" -XX:+UseSerialGC -Xmx64m -XX:ReservedCodeCacheSize=24m -XX:TieredStopAtLevel=1 -XX:CICompilerCount=1 -cp "$JAR" org.jflannel.cni.CniServer "$work/cni.sock" "$work/subnet.env" 2>"$work/server.log" &
  server_pid=$!
  for _ in $(seq 100); do [ -S "$work/cni.sock" ] && break; sleep 0.1; done
  [ -S "$work/cni.sock" ] || { echo "cni-latency: CniServer did not start: $(cat "$work/server.log")" >&2; exit 1; }
  # as flanneld, the server rehearses 250 pods first (CniServer.warmUp); JFLANNEL_CNI_WARM_UP=0 measures it cold
  for _ in $(seq 300); do grep -q 'warmed up' "$work/server.log" && break; [ "${JFLANNEL_CNI_WARM_UP:-1}" = 0 ] && break; sleep 0.1; done
  grep 'warmed up' "$work/server.log" >&2 || true
fi
server_cpu() { # the server's user+sys in clock ticks (0 without a server)
  if [ -n "${server_pid:-}" ]; then awk '{print $14 + $15}' "/proc/$server_pid/stat"; else echo 0; fi
}
TICK=$(getconf CLK_TCK)

declare -A R C S
TIMEFORMAT='%3R %3U %3S'
op() { # variant command -> appends wall and CPU (user+sys, all threads and children) in 0.1 ms units; F: sums the server's ticks
  local v=$1 c=$2 t s0 s1=0
  [ "$v" = F ] && s0=$(server_cpu)
  # shellcheck disable=SC2046
  t=$( { time conf_for "$v" | CNI_COMMAND=$c ip netns exec "$NODE" $(cmd_for "$v") >"$work/out" 2>/dev/null; } 2>&1 ) \
    || { echo "cni-latency: $v $c failed: $(cat "$work/out")" >&2; exit 1; }
  [ "$v" = F ] && s1=$(( $(server_cpu) - s0 ))
  read -r real user sys <<<"$t"
  R[$v$c]+="$(awk -v r="$real" 'BEGIN{printf "%d", r*10000}') "
  C[$v$c]+="$(awk -v u="$user" -v s="$sys" 'BEGIN{printf "%d", (u+s)*10000}') "
  S[$v$c]=$(( ${S[$v$c]:-0} + s1 ))
}
op b ADD   # warm-up: creates the bridge, checks the delegate bytes
[ "$(cat "$work/flannel/$CNI_CONTAINERID")" = "$BRIDGE_CONF" ] || { echo "cni-latency: delegate config differs from (a)'s" >&2; exit 1; }
op b DEL
if [[ " ${list[*]} " == *" F "* ]]; then # the server warm, as flanneld's after its first pods
  for _ in $(seq 20); do op F ADD; op F DEL; done
  [ "$(grep -vc 'warmed up' "$work/server.log" || true)" = 0 ] || cat "$work/server.log" >&2
fi
R=(); C=(); S=()
for _ in $(seq "$N"); do
  for v in "${list[@]}"; do op "$v" ADD; op "$v" DEL; done
done
med() { printf '%s\n' $1 | sort -n | awk '{a[NR]=$1} END {printf "%.1f", a[int((NR+1)/2)]/10}'; }
p99() { printf '%s\n' $1 | sort -n | awk '{a[NR]=$1} END {i=int(NR*0.99+0.999); if(i<1)i=1; printf "%.1f", a[i]/10}'; }
declare -A names=([F]="installed plugin file, fast path" [a]="bridge alone" [b]="flannel -> bridge (bin/flannel)" [c]="flannel, no AppCDS" [d]="flannel, plain java -cp" [e]="flannel, AppCDS + C1 + SerialGC" [f]="installed image plugin (one file)" [g]="same bundle, sh launcher (before)" [u]="upstream Go plugin v1.9.1")
echo "cni-latency: N=$N, $(nproc) cores, $(java -version 2>&1 | head -1), load $(cut -d' ' -f1-3 /proc/loadavg)"
for v in "${list[@]}"; do
  printf '  (%s) %-34s ADD %7s ms (p99 %6s, cpu %6s)   DEL %7s ms (p99 %6s, cpu %6s)\n' "$v" "${names[$v]}" \
    "$(med "${R[${v}ADD]}")" "$(p99 "${R[${v}ADD]}")" "$(med "${C[${v}ADD]}")" \
    "$(med "${R[${v}DEL]}")" "$(p99 "${R[${v}DEL]}")" "$(med "${C[${v}DEL]}")"
done
diff() { awk -v x="$(med "$1")" -v y="$(med "$2")" 'BEGIN{printf "%.1f", x-y}'; }
if [[ " ${list[*]} " == *" F "* ]]; then # the server's CPU in clock ticks, summed: its mean per call
  for c in ADD DEL; do
    srv=$(awk -v t="${S[F$c]:-0}" -v k="$TICK" -v n="$N" 'BEGIN{printf "%.1f", t/k*1000/n}')
    echo "  (F) $c: the server's CPU per call $srv ms (mean of $N; F's cpu above is the launcher's and bridge's);" \
      "own CPU (F - a + server) $(awk -v x="$(med "${C[F$c]}")" -v y="$(med "${C[a$c]}")" -v z="$srv" 'BEGIN{printf "%.1f", x-y+z}') ms"
  done
fi
for v in "${list[@]}"; do
  [ "$v" = a ] && continue
  echo "plugin cost ($v - a): ADD $(diff "${R[${v}ADD]}" "${R[aADD]}") ms/op, DEL $(diff "${R[${v}DEL]}" "${R[aDEL]}") ms/op" \
    "(median wall; CPU ADD $(diff "${C[${v}ADD]}" "${C[aADD]}"), DEL $(diff "${C[${v}DEL]}" "${C[aDEL]}") ms)"
done

# the storm: STORM ADDs at once on the node (one pod namespace each), then STORM DELs at once; never under
# SCHED_FIFO (chrt -o 0): 100 Go bridge processes at real-time priority spin on 2 cores and starve the machine
# (it happened here: 20 minutes at load 500 until killed)
storm() { # variant command -> "wall_ms cpu_ms failures"
  local v=$1 c=$2 s0 t fails
  s0=$(server_cpu)
  # shellcheck disable=SC2046
  t=$( { time (
      for i in $(seq "$STORM"); do
        conf_for "$v" | CNI_COMMAND=$c CNI_CONTAINERID=storm$suffix-$v-$i CNI_NETNS=/run/netns/$POD-$i \
          chrt -o 0 ip netns exec "$NODE" $(cmd_for "$v") >"$work/storm-$i.out" 2>>"$work/storm-$v$c.err" || echo "$i" >>"$work/storm-fail" &
      done
      wait
    ); } 2>&1 )
  fails=$( [ -f "$work/storm-fail" ] && wc -l <"$work/storm-fail" || echo 0 ); rm -f "$work/storm-fail"
  read -r real user sys <<<"$t"
  awk -v r="$real" -v u="$user" -v s="$sys" -v d="$(( $(server_cpu) - s0 ))" -v k="$TICK" -v f="$fails" \
    'BEGIN{printf "%.0f ms wall, %.0f ms cpu, %d failed", r*1000, (u+s+d/k)*1000, f}'
  printf ', %s launchers gave the daemon up' "$(grep -c 'fast path: no valid answer' "$work/storm-$v$c.err" 2>/dev/null || true)"
}
if [ "${STORM:-0}" -gt 0 ]; then
  for i in $(seq "$STORM"); do ip netns add "$POD-$i"; done
  for v in "${list[@]}"; do
    add=$(storm "$v" ADD); del=$(storm "$v" DEL)
    echo "storm ($v) $STORM ADDs at once: $add; then $STORM DELs at once: $del"
  done
fi
