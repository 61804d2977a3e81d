#!/usr/bin/env bash
# Why the plugin has its own JSON code: the cold-start cost of reading the kube-flannel config and
# writing the delegate config once, in a fresh JVM each time (what the plugin does per pod), with
# (1) jackson-databind ObjectMapper, (2) jackson-core streaming JsonParser/JsonGenerator,
# (3) the plugin's GoJson/GoJsonWriter, and (0) an empty main for the JVM floor.
# Flags as bin/flannel (-Xint, JDK CDS; no AppCDS so no variant gets an archive the others lack).
# Usage: bench/cni-json-startup.sh [N]
set -euo pipefail
cd "$(dirname "$0")/.."
N=${1:-30}
M2=${M2:-$HOME/.m2/repository}/com/fasterxml/jackson/core
V=$(sed -n 's:.*<jackson.version>\(.*\)</jackson.version>.*:\1:p' pom.xml)
JACKSON="$M2/jackson-core/$V/jackson-core-$V.jar:$M2/jackson-databind/$V/jackson-databind-$V.jar:$(ls "$M2"/jackson-annotations/"${V%.*}"*/jackson-annotations-*.jar | head -1)"  # 2.20+: annotations are versioned "2.NN"
[ -f cni-flannel/target/cni-flannel.jar ] || mvn -q -pl cni-flannel -am package -DskipTests >&2
PLUGIN=$(readlink -f cni-flannel/target/classes)
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
mkdir -p "$work/src/org/jflannel/cni"
cat > "$work/src/org/jflannel/cni/JsonStart.java" <<'JAVA'
package org.jflannel.cni;

import java.nio.charset.StandardCharsets;
import java.util.Map;

public final class JsonStart {
    static final String IN = "{\"cniVersion\":\"0.3.1\",\"delegate\":{\"hairpinMode\":true,\"isDefaultGateway\":true},"
        + "\"name\":\"cbr0\",\"type\":\"flannel\",\"runtimeConfig\":{\"portMappings\":[{\"hostPort\":8080,\"containerPort\":80}]}}";

    public static void main(String[] args) throws Exception {
        byte[] in = IN.getBytes(StandardCharsets.UTF_8);
        byte[] out;
        switch (args[0]) {
            case "mapper" -> {
                com.fasterxml.jackson.databind.ObjectMapper m = new com.fasterxml.jackson.databind.ObjectMapper();
                @SuppressWarnings("unchecked") Map<String, Object> tree = m.readValue(in, Map.class);
                out = m.writeValueAsBytes(tree);
            }
            case "streaming" -> {
                com.fasterxml.jackson.core.JsonFactory f = new com.fasterxml.jackson.core.JsonFactory();
                java.io.ByteArrayOutputStream bos = new java.io.ByteArrayOutputStream();
                try (com.fasterxml.jackson.core.JsonParser p = f.createParser(in);
                     com.fasterxml.jackson.core.JsonGenerator g = f.createGenerator(bos)) {
                    while (p.nextToken() != null) {
                        g.copyCurrentEvent(p);
                    }
                }
                out = bos.toByteArray();
            }
            case "gojson" -> out = GoJsonWriter.compact(GoJson.parse(in));
            default -> out = in;
        }
        System.out.write(out.length > 0 ? 0 : 1);
    }
}
JAVA
javac -XDstringConcat=inline -d "$work/classes" -cp "$PLUGIN:$JACKSON" "$work/src/org/jflannel/cni/JsonStart.java"
CP="$work/classes:$PLUGIN:$JACKSON"
for v in none mapper streaming gojson; do
  java -cp "$CP" org.jflannel.cni.JsonStart $v >/dev/null || { echo "cni-json-startup: variant $v failed" >&2; exit 1; }
done
declare -A R C
TIMEFORMAT='%3R %3U %3S'
for _ in $(seq "$N"); do
  for v in none mapper streaming gojson; do
    t=$( { time java -Xint -XX:-UsePerfData -Xshare:auto -cp "$CP" org.jflannel.cni.JsonStart $v >/dev/null 2>&1; } 2>&1 )
    read -r real user sys <<<"$t"
    R[$v]+="$(awk -v r="$real" 'BEGIN{printf "%d", r*10000}') "
    C[$v]+="$(awk -v u="$user" -v s="$sys" 'BEGIN{printf "%d", (u+s)*10000}') "
  done
done
med() { printf '%s\n' $1 | sort -n | awk '{a[NR]=$1} END {printf "%.1f", a[int((NR+1)/2)]/10}'; }
echo "cni-json-startup: N=$N, jackson $V, load $(cut -d' ' -f1-3 /proc/loadavg)"
for v in none mapper streaming gojson; do
  printf '  %-10s wall %6s ms  cpu %6s ms\n' "$v" "$(med "${R[$v]}")" "$(med "${C[$v]}")"
done
