#!/usr/bin/env bash
# etcd lease watch benchmark: N leases (default 2000) in a throwaway etcd on loopback (stopped at the
# end), time to the full snapshot, then N further puts and the delay from the last put to the last
# event delivered. Prints one result line. Needs /usr/bin/etcd. Usage: bench/etcd-watch.sh [N]
set -euo pipefail
cd "$(dirname "$0")/.."
mvn -B -q -o -Dstyle.color=never -pl subnet -am test-compile dependency:build-classpath \
    -Dmdep.outputFile=target/bench.classpath -Dmdep.includeScope=test >/dev/null
CP="subnet/target/test-classes:subnet/target/classes:$(cat subnet/target/bench.classpath)"
exec java ${JAVA_OPTS:-} -Dlogback.configurationFile=bench/etcd-watch-logback.xml -cp "$CP" org.jflannel.subnet.etcd.EtcdWatchBench "${1:-2000}"
