#!/usr/bin/env bash
# JVM start-up variants of the flannel plugin, interleaved, median wall time of N runs each.
# Usage: bench/cni-startup.sh [N] [COMMAND]   (COMMAND: VERSION (default) or ADD, which runs the
# ADD path in-process against a fake delegate that answers at once: parsing, subnet.env,
# scratch file, one process start, result printing). Prints one line per variant.
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-30}
CMD=${2:-VERSION}
T=cni-flannel/target
J=$T/cni-flannel.jar
[ -f "$J" ] && [ -f "$T/flannel.jsa" ] || mvn -q -pl cni-flannel -am package -DskipTests >&2
J=$(readlink -f "$J"); JSA=$(readlink -f "$T/flannel.jsa")
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
mkdir -p "$work/bin"
printf '#!/bin/sh\ncat >/dev/null\necho '"'"'{"cniVersion":"0.3.1","ips":[{"version":"4","address":"10.244.1.2/24","gateway":"10.244.1.1"}]}'"'"'\n' > "$work/bin/bridge"
chmod +x "$work/bin/bridge"
printf 'FLANNEL_NETWORK=10.244.0.0/16\nFLANNEL_SUBNET=10.244.1.1/24\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n' > "$work/subnet.env"
STDIN="{\"cniVersion\":\"0.3.1\",\"name\":\"cbr0\",\"type\":\"flannel\",\"delegate\":{\"hairpinMode\":true},\"subnetFile\":\"$work/subnet.env\",\"dataDir\":\"$work/data\"}"
export CNI_COMMAND=$CMD CNI_CONTAINERID=bench CNI_NETNS=/run/netns/none CNI_IFNAME=eth0 CNI_PATH=$work/bin

FAST="-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"
declare -A V=(
  [1-plain]="-Xshare:auto"
  [2-no-cds]="-Xshare:off"
  [3-c1+serial]="$FAST"
  [4-c1+serial+noperf]="$FAST -XX:-UsePerfData"
  [5-appcds]="$FAST -XX:-UsePerfData -XX:SharedArchiveFile=$JSA"
  [6-appcds+vfork]="$FAST -XX:-UsePerfData -XX:SharedArchiveFile=$JSA -Djdk.lang.Process.launchMechanism=VFORK"
)
declare -A R
for i in $(seq "$N"); do
  for k in "${!V[@]}"; do
    s=$(date +%s%N)
    # shellcheck disable=SC2086
    printf '%s' "$STDIN" | java ${V[$k]} -cp "$J" org.jflannel.cni.Main >/dev/null 2>&1 || true
    e=$(date +%s%N)
    R[$k]+="$(( (e - s) / 100000 )) "
  done
done
for k in $(printf '%s\n' "${!V[@]}" | sort); do
  med=$(printf '%s\n' ${R[$k]} | sort -n | awk '{a[NR]=$1} END {m=a[int((NR+1)/2)]; printf "%.1f", m/10}')
  printf '%-22s %s median %6s ms  (%s, N=%d)\n' "$k" "$CMD" "$med" "${V[$k]}" "$N"
done
