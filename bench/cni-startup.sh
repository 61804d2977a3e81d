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

FAST="-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -XX:-UsePerfData"
declare -A V=(
  [1-defaults]="-Xshare:auto"
  [2-no-cds-at-all]="-Xshare:off"
  [3-c1+serial+noperf]="$FAST"
  [4-appcds]="$FAST -XX:SharedArchiveFile=$JSA"
  [5-appcds+g1]="-XX:TieredStopAtLevel=1 -XX:-UsePerfData -XX:SharedArchiveFile=$JSA"
  [6-appcds+xint]="-Xint -XX:+UseSerialGC -XX:-UsePerfData -XX:SharedArchiveFile=$JSA"
  [7-appcds+vfork]="$FAST -XX:SharedArchiveFile=$JSA -Djdk.lang.Process.launchMechanism=VFORK"
  [8-appcds+g1+xint]="-Xint -XX:-UsePerfData -XX:SharedArchiveFile=$JSA"
)
declare -A R C
TIMEFORMAT='%3R %3U %3S'
for i in $(seq "$N"); do
  for k in "${!V[@]}"; do
    # shellcheck disable=SC2086
    t=$( { time java ${V[$k]} -cp "$J" org.jflannel.cni.Main <<<"$STDIN" >/dev/null 2>&1; } 2>&1 ) || true
    read -r real user sys <<<"$t"
    R[$k]+="$(awk -v r="$real" 'BEGIN{printf "%d", r*10000}') "
    C[$k]+="$(awk -v u="$user" -v s="$sys" 'BEGIN{printf "%d", (u+s)*10000}') "
  done
done
med() { printf '%s\n' $1 | sort -n | awk '{a[NR]=$1} END {printf "%.1f", a[int((NR+1)/2)]/10}'; }
echo "cni-startup: $CMD, N=$N, load $(cut -d' ' -f1-3 /proc/loadavg)"
for k in $(printf '%s\n' "${!V[@]}" | sort); do
  printf '  %-20s wall %6s ms  cpu %6s ms   %s\n' "$k" "$(med "${R[$k]}")" "$(med "${C[$k]}")" "${V[$k]/$JSA/flannel.jsa}"
done
