#!/bin/sh
# Runs NA.java and evp-loop.c once in one CPU configuration: "default" (all of this CPU's features) or "avx2"
# (the AVX2-only host emulated: the JVM at -XX:UseAVX=2, OpenSSL told OPENSSL_ia32cap=:~0x210000, no AVX-512F/IFMA);
# prints the load and checks that both settings take effect. Needs backend-wireguard/target/classes
# (mvn -B -ntp -o -q -pl backend-wireguard -am install -DskipTests). Usage: bench/native-aead/run.sh default|avx2
set -eu
cd "$(dirname "$0")/../.."
J=${J:-/usr/lib/jvm/temurin-25-jdk-amd64/bin}
case "${1:-}" in
    default) jvm=""; unset OPENSSL_ia32cap || true ;;
    avx2) jvm="-XX:UseAVX=2"; export OPENSSL_ia32cap=":~0x210000" ;;
    *) echo "usage: $0 default|avx2" >&2; exit 2 ;;
esac
echo "== $1 $(date -u +%FT%TZ) load: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "jvm flags: $($J/java $jvm -XX:+UnlockDiagnosticVMOptions -XX:+PrintFlagsFinal -version 2>/dev/null | awk '/ UseAVX |UsePoly1305Intrinsics|UseChaCha20Intrinsics/ {printf "%s=%s ", $2, $4}')"
echo "openssl speed (AEAD, 1,408 bytes, streaming updates): $(nice -n 5 openssl speed -seconds 1 -bytes 1408 -evp chacha20-poly1305 2>/dev/null | tail -1)"
mkdir -p /tmp/na
$J/javac -d /tmp/na bench/native-aead/NA.java
gcc -O2 -o /tmp/na/evp-loop bench/native-aead/evp-loop.c -lcrypto
nice -n 5 $J/java $jvm --enable-native-access=ALL-UNNAMED --add-opens=java.base/com.sun.crypto.provider=ALL-UNNAMED \
    --add-exports=java.base/sun.security.util.math=ALL-UNNAMED -cp /tmp/na:backend-wireguard/target/classes NA
nice -n 5 /tmp/na/evp-loop
nice -n 5 /tmp/na/evp-loop z
echo "== end $(date -u +%FT%TZ) load: $(cut -d' ' -f1-3 /proc/loadavg)"
