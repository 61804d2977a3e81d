#!/usr/bin/env bash
# Builds the jflannel container image as an OCI archive, daemonless (no Docker, no container runtime):
#
#   packaging/build-image.sh VERSION OUT.oci.tar      (root; bin/image and the Maven build call it)
#
# Needs flanneld/target and cni-flannel/target built (mvn package), mmdebstrap, umoci, the Temurin 25
# JDK at $JFLANNEL_JDK (default /usr/lib/jvm/temurin-25-jdk-amd64), binutils (strip, objdump), zstd.
#
# Two layers, in this order (docs/image.md says why each choice), zstd-compressed unless
# JFLANNEL_IMAGE_COMPRESSION=gzip (packaging/compress-layers.py):
#   1. base OS: the few Debian bookworm packages the image runs (iptables, nftables, dash, ..., extracted by
#      mmdebstrap from Debian's packages; strongSwan's charon for the ipsec backend), documentation and locales
#      left out, plus our iptables-wrapper (nft/legacy choice);
#   2. Java runtimes and our application: /opt/jflannel/jre (the daemon's jlink), jars, launchers, and the
#      CNI plugin file (its own java.base runtime and AppCDS archive, dumped inside the root filesystem
#      with chroot for the path the plugin runs at).
# Caches (outside the repository, so a warm build is fast and a fresh machine still works):
#   $CACHE/debs/        the downloaded .debs
#   $CACHE/base-KEY.tar the base root filesystem, KEY = hash of everything that decides it
set -euo pipefail

version=${1:?usage: build-image.sh VERSION OUT.oci.tar}
out=${2:?usage: build-image.sh VERSION OUT.oci.tar}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
JDK=${JFLANNEL_JDK:-/usr/lib/jvm/temurin-25-jdk-amd64}
CACHE=${JFLANNEL_CACHE:-/var/cache/jflannel}
SUITE=bookworm
# reproducible timestamps: every file, layer and config carries this time (the jars' outputTimestamp)
SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(date -d 2026-11-22T00:00:00Z +%s)}
export SOURCE_DATE_EPOCH
created=$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%dT%H:%M:%SZ)
# the daemon's modules (jdeps over flanneld's class path, minus java.desktop/java.compiler/jdk.jfr, which
# only optional code paths reference: Jackson's java.beans support, Vert.x's codegen, Netty's JFR events;
# and minus java.sql, which brought java.xml (2,210 classes, 11 MB of the modules file): the daemon's
# only java.sql classes were picocli's optional converters, registered only if the class loads, and
# Jackson's and protobuf-util's java.sql (de)serializers, which no type of ours reaches)
FLANNELD_MODULES=java.base,java.logging,java.naming,java.net.http,jdk.httpserver,jdk.net,jdk.unsupported
CNI_MODULES=java.base
# the layers' compression (docs/image.md): zstd (containerd >= 1.5, CRI-O, Docker >= 23) or gzip (any runtime)
COMPRESSION=${JFLANNEL_IMAGE_COMPRESSION:-zstd}
case "$COMPRESSION" in zstd|gzip) ;; *) echo "image: JFLANNEL_IMAGE_COMPRESSION must be zstd or gzip, got \"$COMPRESSION\"" >&2; exit 2 ;; esac

log() { echo "image: $*" >&2; }
[ "$(id -u)" -eq 0 ] || { log "must run as root (mmdebstrap, umoci unpack, chroot)"; exit 1; }
for t in mmdebstrap umoci objdump strip musl-gcc zstd; do
    command -v "$t" >/dev/null || { log "$t missing (bin/setup installs it)"; exit 1; }
done
[ -x "$JDK/bin/jlink" ] || { log "no JDK at $JDK (bin/setup installs Temurin 25)"; exit 1; }
flanneld_jar=$(ls "$repo"/flanneld/target/flanneld-*.jar 2>/dev/null | grep -v -e sources -e tests | head -n 1 || true)
cni_jar="$repo/cni-flannel/target/cni-flannel.jar"
[ -n "$flanneld_jar" ] && [ -f "$cni_jar" ] || { log "build flanneld and cni-flannel first (mvn package)"; exit 1; }

work="$(dirname "$out")/image-work"
rm -rf "$work"
mkdir -p "$work" "$CACHE/debs"
bundle="$work/bundle"
rootfs="$bundle/rootfs"
layout="$work/oci"
start=$(date +%s)

# --- 1. the base root filesystem ---------------------------------------------------------------------
# Not minbase (87 MB: apt, perl, bash, systemd's libraries): only the packages a process in the image
# runs, and their hard dependencies, extracted (mmdebstrap --variant=extract, no dpkg run); fixup.sh
# does what their maintainer scripts would have that the image needs (passwd/group, the CA bundle,
# iptables' alternatives) and removes what nothing reads (docs, gconv, OpenSSL's tool and libssl, the
# strongSwan plugins we do not load). 28.6 MB unpacked (18.1 without strongSwan).
#   dash, coreutils, grep: the launchers and iptables-wrapper; dpkg: update-alternatives (the wrapper);
#   iptables, nftables: the daemon's rules; netbase: /etc/protocols for iptables; base-files: os-release
#   libstrongswan, strongswan-libcharon, libstrongswan-standard-plugins (openssl), strongswan-swanctl (the
#   vici plugin): the ipsec backend's charon (issue 39), whose program itself comes from strongswan-charon's
#   .deb without that package's dependencies (charon-from-deb.sh); fixup.sh keeps only the plugins we load
BASE_PACKAGES=base-files,base-passwd,dash,coreutils,grep,dpkg,netbase,iptables,nftables,ca-certificates
STRONGSWAN_PACKAGES=libstrongswan,strongswan-libcharon,libstrongswan-standard-plugins,strongswan-swanctl
# what decides the base: the package set, the apt sources, this section of the script, the hook and fixup.sh
base_key=$( { echo "$SUITE extract $BASE_PACKAGES $STRONGSWAN_PACKAGES strongswan-charon $SOURCE_DATE_EPOCH merged-usr v4";
              cat "$here/src/base/fixup.sh" "$here/src/base/charon-from-deb.sh";
              cat /etc/apt/sources.list /etc/apt/sources.list.d/* 2>/dev/null || true; } | sha256sum | cut -c1-16)
base_tar="$CACHE/base-$base_key.tar"
if [ ! -f "$base_tar" ]; then
    log "base: mmdebstrap $SUITE extract $BASE_PACKAGES,$STRONGSWAN_PACKAGES + strongswan-charon's program (debs cached in $CACHE/debs)"
    # merged-usr hook: /usr merged by mmdebstrap itself
    mmdebstrap --variant=extract --include="$BASE_PACKAGES,$STRONGSWAN_PACKAGES" --mode=root --format=directory \
        --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr --skip=download/empty --skip=essential/unlink \
        --setup-hook='mkdir -p "$1"/var/cache/apt/archives/' \
        --setup-hook="sync-in $CACHE/debs /var/cache/apt/archives/" \
        --extract-hook="$here/src/base/charon-from-deb.sh" \
        "$SUITE" "$work/base" >"$work/mmdebstrap.log" 2>&1 || { tail -20 "$work/mmdebstrap.log" >&2; exit 1; }
    # (customize hooks do not run in the extract variant: the downloaded .debs are still in the tree)
    find "$work/base/var/cache/apt/archives" -name '*.deb' -exec cp -n {} "$CACHE/debs/" \; -delete
    "$here/src/base/fixup.sh" "$work/base"
    tar --sort=name --numeric-owner -cf "$base_tar.tmp" -C "$work/base" .
    rm -rf "$work/base"
    mv -f "$base_tar.tmp" "$base_tar"
    # bases of other keys unused for a week are dead weight (not at once: worktrees of other branches
    # share the cache, and deleting theirs makes every build on the machine a cold one)
    find "$CACHE" -maxdepth 1 -name 'base-*.tar' ! -name "base-$base_key.tar" -mtime +7 -delete
else
    log "base: cached $base_tar"
fi

log "oci: umoci init $layout"
umoci init --layout "$layout"
umoci new --image "$layout:$version"
umoci unpack --image "$layout:$version" "$bundle" >/dev/null
# device nodes stay out of the layer (the runtime mounts /dev); tar restores owners and modes as root
tar -xf "$base_tar" -C "$rootfs" --numeric-owner --exclude='./dev/*'
# iptables nft/legacy: the six commands go through the wrapper until it has chosen (see the script)
install -m 0755 "$here/src/image/usr/sbin/iptables-wrapper" "$rootfs/usr/sbin/iptables-wrapper"
for cmd in iptables iptables-save iptables-restore ip6tables ip6tables-save ip6tables-restore; do
    ln -sfn iptables-wrapper "$rootfs/usr/sbin/$cmd"
done

# every file we add or touch gets the same time, so the same inputs give the same layers
stamp() { find "$@" -newermt "@$SOURCE_DATE_EPOCH" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +; }
repack() { # $1: what the layer holds
    stamp "$rootfs"
    umoci repack --refresh-bundle --image "$layout:$version" --history.created "$created" \
        --history.created_by "packaging/build-image.sh: $1" "$bundle"
}
repack "Debian $SUITE: $BASE_PACKAGES,$STRONGSWAN_PACKAGES, strongswan-charon's charon (extracted); iptables-wrapper"
log "layer 1 (base OS) done ($(du -sh "$rootfs" | cut -f1))"

# --- 2. Java runtimes ---------------------------------------------------------------------------------
jlink_runtime() { # $1 modules, $2 output directory, $3 extra jlink options
    # shellcheck disable=SC2086 # $3 is a list of options
    "$JDK/bin/jlink" --add-modules "$1" --strip-debug --no-header-files --no-man-pages ${3:-} \
        --output "$2" >/dev/null
    # the JDK's own CDS archive is not needed: our AppCDS archives are static (they hold the JDK's
    # classes too); libjvm.so carries a 5 MB symbol table the JVM never reads
    rm -f "$2"/lib/server/classes*.jsa
    find "$2" -name '*.so' -exec strip --strip-unneeded {} +
}
opt="$rootfs/opt/jflannel"
mkdir -p "$opt/bin" "$opt/app/lib" "$opt/cni"
log "jlink: flanneld runtime ($FLANNELD_MODULES)"
# the daemon's modules file uncompressed: a compressed one (--compress=zip-6, 21 MB less unpacked, about the
# same once the layer is gzipped) costs the long-running daemon 4 MB of RSS in decompression buffers
# (N=500 etcd leases: 97.4 -> 93.7 MB)
jlink_runtime "$FLANNELD_MODULES" "$opt/jre"
# the CNI bundle: runtime + jars; its directory name carries a hash of that content, so a host keeps
# one directory per version and a launcher always names a complete one
cnistage="$work/cni-stage"
mkdir -p "$cnistage/lib"
log "jlink: CNI plugin runtime ($CNI_MODULES)"
# the plugin's modules file uncompressed too under zstd (it was --compress=zip-6): in the image it is the
# one-file plugin's payload, in the same layer as the daemon's runtime, and zstd's long-range matching
# stores its java.base classes once with the daemon's (-11 MB compressed; +14 MB on the node's disk, 66 MB).
# gzip's 32 KB window cannot: there it stays zip-compressed
cni_jlink_opts=""
[ "$COMPRESSION" = gzip ] && cni_jlink_opts=--compress=zip-6
jlink_runtime "$CNI_MODULES" "$cnistage/jre" "$cni_jlink_opts"
# what the plugin never runs: keytool, jexec (executable jars), jspawnhelper (delegates start by FORK, see
# the launcher), jrt-fs.jar (other JDKs reading this runtime), the JDK's default class list (the cache is
# made from our own training run)
rm -f "$cnistage/jre/bin/keytool" "$cnistage/jre/lib/jexec" "$cnistage/jre/lib/jspawnhelper" \
    "$cnistage/jre/lib/jrt-fs.jar" "$cnistage/jre/lib/classlist"
# glibc's own loader and the libraries the JVM links (Debian's libc6, from the base): the plugin runs
# through them (the loader in the runtime's bin/, where the java launcher looks for its home), so a
# host without glibc (Talos, Bottlerocket) runs it; packaging/src/launcher/flannel-launcher.c says how
cp "$rootfs/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2" "$cnistage/jre/bin/ld-linux-x86-64.so.2"
mkdir -p "$cnistage/jre/lib/glibc"
for l in libc.so.6 libm.so.6 libdl.so.2 libpthread.so.0 librt.so.1; do
    cp "$rootfs/usr/lib/x86_64-linux-gnu/$l" "$cnistage/jre/lib/glibc/$l"
done
cp "$cni_jar" "$cnistage/cni-flannel.jar"
cp "$repo"/cni-flannel/target/lib/*.jar "$cnistage/lib/"
# every jar of the image without its classes' local-variable tables (a debugger's; line numbers stay for
# stack traces; packaging/src/tools/StripLocalVariables.java checks each method's bytecode is unchanged), and
# their manifests stored, not deflated (the CNI plugin then never loads libzip.so: docs/image.md)
strip_jars() { "$JDK/bin/java" "$here/src/tools/StripLocalVariables.java" "$@" 2>>"$work/strip-jars.log" || { tail -5 "$work/strip-jars.log" >&2; exit 1; }; }
strip_jars "$cnistage/cni-flannel.jar" "$cnistage"/lib/*.jar
# identical files in both runtimes (libjvm.so, ...) become hard links: stored once in the layer
(cd "$cnistage/jre" && find . -type f) | while read -r f; do
    if [ -f "$opt/jre/$f" ] && cmp -s "$cnistage/jre/$f" "$opt/jre/$f"; then
        ln -f "$opt/jre/$f" "$cnistage/jre/$f"
    fi
done
stamp "$cnistage"
hash=$( (cd "$cnistage" && find . -type f | LC_ALL=C sort | xargs sha256sum; cat "$here/src/launcher/flannel-launcher.c" "$here/plugin-file.sh") \
        | sha256sum | cut -c1-12)
cnibundle="jflannel-$hash"
# the bundle is staged outside the root filesystem: the image carries it once, as the payload of the
# one-file plugin (layer 2), and install-cni-plugin unpacks it from there
cnidir="$work/cni-bundle/$cnibundle"
mkdir -p "$cnidir"
mv "$cnistage/jre" "$cnidir/jre"
# no layer of their own: the runtimes go into the application's layer, where the plugin file's payload
# repeats libjvm.so and java.base's classes, which one zstd stream stores once (-7 MB compressed; two
# layers cannot share bytes). The application's layer changes with every version anyway: the plugin
# file carries the plugin's jars and runtime.
runtime_desc="Java runtimes: jlink of Temurin $("$JDK/bin/java" -version 2>&1 | head -1 | cut -d'"' -f2) ($FLANNELD_MODULES; CNI: $CNI_MODULES)"

# --- 3. the application -------------------------------------------------------------------------------
cp "$flanneld_jar" "$opt/app/flanneld.jar"
cp "$repo"/flanneld/target/lib/*.jar "$opt/app/lib/"
# fabric8's model jars: the client depends on all 22 (14 MB), the daemon loads classes from core and
# common (Node, watch events, Status) and, at client start, from apps, extensions, batch, certificates
# and autoscaling (handlers the client registers), and networking (NetworkPolicy, for --network-policy);
# flanneld/cds/kube.classlist names every one loaded. The rest stay out (the jar's Class-Path still names
# them; the JVM skips absent entries). The DaemonSet-on-fake-hosts ITs run the daemon from this image.
for unused in admissionregistration apiextensions coordination discovery events flowcontrol gatewayapi \
              metrics node policy rbac resource scheduling storageclass; do
    rm -f "$opt/app/lib/kubernetes-model-$unused-"*.jar
done
# of networking, only NetworkPolicy (and IPBlock, which it holds) is read: the jar's other kinds and its Jandex
# index are 85 % of it (563 -> 85 KB), and the image has a size budget (packaging/trim-jar.py says more)
python3 "$here/trim-jar.py" "$(ls "$opt"/app/lib/kubernetes-model-networking-*.jar)" 'networking/v1/(NetworkPolicy|IPBlock)' >&2
# JNA's jar carries its native dispatch library for 30 platforms (1.9 MB): only linux-x86-64's stays
jna=$(realpath "$(ls "$opt"/app/lib/jna-*.jar)")
(cd "$work" && rm -rf jna && mkdir jna && cd jna && unzip -q "$jna" && \
    find com/sun/jna -mindepth 1 -maxdepth 1 -type d ! -name linux-x86-64 ! -name ptr ! -name internal \
        ! -name win32 -exec sh -c 'ls "$1"/*.class >/dev/null 2>&1 || rm -rf "$1"' sh {} \; && \
    rm -f "$jna" && find . -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} + && \
    find . -type f | LC_ALL=C sort | zip -q -X -D "$jna" -@)
# Google's common protos (2.7 MB: api, type, cloud, longrunning, shopping, ...): gRPC's StatusProto uses
# com.google.rpc (Status, error details), which references nothing else of the jar, and nothing else on
# the class path references the rest (jdeps); neither mode loads a class of it (flanneld/cds/*.classlist).
# com.google.rpc stays (2.7 -> 0.9 MB)
protos=$(realpath "$(ls "$opt"/app/lib/proto-google-common-protos-*.jar)")
(cd "$work" && rm -rf protos && mkdir protos && cd protos && unzip -q "$protos" && \
    find . -mindepth 1 -maxdepth 1 ! -name META-INF ! -name com -exec rm -rf {} + && \
    find com/google -mindepth 1 -maxdepth 1 ! -name rpc -exec rm -rf {} + && \
    rm -f "$protos" && find . -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} + && \
    find . -type f | LC_ALL=C sort | zip -q -X -D "$protos" -@)
strip_jars "$opt/app/flanneld.jar" "$opt"/app/lib/*.jar
log "jars: local-variable tables left out ($(awk '{b+=$3; c+=$5} END {printf "%.1f -> %.1f MB", b/1e6, c/1e6}' "$work/strip-jars.log"))"
install -m 0755 "$here/src/image/opt/jflannel/bin/flanneld" "$opt/bin/flanneld"
cp "$cnistage/cni-flannel.jar" "$cnidir/"
cp -r "$cnistage/lib" "$cnidir/"
echo "$version" > "$opt/VERSION"

# an AppCDS archive records the size and mtime of every jar it was dumped from: the final times first
stamp "$rootfs" "$work/cni-bundle"

# runs a command inside the root filesystem: a private mount namespace with /proc and /dev, gone after
in_rootfs() {
    unshare --mount --propagation private -- sh -c '
        r=$1; shift
        mount -t proc proc "$r/proc" && mount --rbind /dev "$r/dev" && exec chroot "$r" "$@"' sh "$rootfs" "$@"
}
# the daemon's AppCDS archives are not shipped (82 MB): "flanneld cds-archive" dumps the one for its mode
# on the node, from these class lists; KEY (a hash of everything an archive depends on) names them, so
# a node never maps an archive of another image (jars keep their sizes and times across versions)
mkdir -p "$opt/app/cds"
cp "$repo"/flanneld/cds/etcd.classlist "$repo"/flanneld/cds/kube.classlist "$opt/app/cds/"
(cd "$opt" && find jre app -type f | LC_ALL=C sort | xargs sha256sum; cat bin/flanneld) | sha256sum | cut -c1-16 > "$opt/app/cds/KEY"
stamp "$rootfs"
mkdir -p "$rootfs/tmp/cds"
# the CNI plugin's AOT cache (JDK 25, JEP 483/514: its classes loaded and linked, invokedynamic sites
# resolved), dumped where the plugin runs, /opt/cni/bin/<bundle> (JDK 25 maps it at another path too, the
# runtime and the jar moved together), from a training run of every command (CdsTraining), with exactly
# the launcher's JVM options, read from JVM_OPTS in its source: the GC and heap size decide whether the
# cache is accepted (ImageIT runs the plugin with -XX:AOTMode=on), and the -Ds what the training loads
# (with FORK, ProcessImpl parses the property through Enum.valueOf: trained without it, 66 classes came
# from the modules file on every call)
CNI_JVM_OPTS=$(sed -n '/^static const char \*const JVM_OPTS\[\] = {/,/^};/p' "$here/src/launcher/flannel-launcher.c" \
    | grep -o '"-[^"]*"' | tr -d '"' | tr '\n' ' ')
case " $CNI_JVM_OPTS " in *" -XX:+UseSerialGC "*) ;; *) log "no JVM_OPTS found in flannel-launcher.c"; exit 1 ;; esac
log "AOT cache: CNI plugin for /opt/cni/bin/$cnibundle"
mkdir -p "$rootfs/opt/cni/bin"
cp -a "$cnidir" "$rootfs/opt/cni/bin/"
d=/opt/cni/bin/$cnibundle
# shellcheck disable=SC2086 # CNI_JVM_OPTS is a list of options
in_rootfs "$d/jre/bin/java" $CNI_JVM_OPTS -XX:AOTMode=record -XX:AOTConfiguration=/tmp/cds/flannel.aotconf \
    -cp "$d/cni-flannel.jar" org.jflannel.cni.CdsTraining >"$work/cds-cni.log" 2>&1 || { tail "$work/cds-cni.log" >&2; exit 1; }
# shellcheck disable=SC2086
in_rootfs "$d/jre/bin/java" $CNI_JVM_OPTS -XX:AOTMode=create -XX:AOTConfiguration=/tmp/cds/flannel.aotconf \
    -XX:AOTCache="$d/flannel.aot" -cp "$d/cni-flannel.jar" >>"$work/cds-cni.log" 2>&1 || { tail "$work/cds-cni.log" >&2; exit 1; }
mv "$rootfs$d/flannel.aot" "$cnidir/flannel.aot"
rm -rf "$rootfs/opt/cni" "$rootfs/tmp/cds" "$rootfs"/tmp/hsperfdata_* "$rootfs"/tmp/flannel-cds*
chmod -R a+rX "$opt" "$cnidir"
# the plugin as one file: the static launcher + the bundle as its payload (packaging/plugin-file.sh);
# install-cni-plugin unpacks the payload beside the copy it installs, upstream's init container copies
# /flannel (the same file, a hard link) alone and the first run unpacks the bundle
stamp "$rootfs" "$work/cni-bundle"
log "CNI plugin file: static launcher + $cnibundle"
"$here/plugin-file.sh" "$cnidir" "$hash" "$opt/cni/flannel"
ln -f "$opt/cni/flannel" "$rootfs/flannel"
# upstream's paths (its kube-flannel.yml runs these): /opt/bin/flanneld, /opt/bin/install-conf SRC DST
mkdir -p "$rootfs/opt/bin"
ln -sfn ../jflannel/bin/flanneld "$rootfs/opt/bin/flanneld"
install -m 0755 "$here/src/image/opt/bin/install-conf" "$rootfs/opt/bin/install-conf"

repack "$runtime_desc; jflannel $version: flanneld, the CNI plugin ($cnibundle, /flannel), upstream's /opt/bin"
log "layer 2 (Java runtimes, application) done"

umoci config --image "$layout:$version" --no-history --created "$created" --author "jflannel" \
    --architecture amd64 --os linux --config.cmd /opt/jflannel/bin/flanneld \
    --config.env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --config.label org.opencontainers.image.title=jflannel --config.label "org.opencontainers.image.version=$version"
umoci gc --layout "$layout"
# umoci's layers are gzip at Go's default level: re-encoded as $COMPRESSION (packaging/compress-layers.py)
log "layers: $COMPRESSION"
"$here/compress-layers.py" "$layout" "$COMPRESSION"
# the single manifest: tag VERSION (org.opencontainers.image.ref.name), and for containerd
# (io.containerd.image.name) ghcr.io/jflannel/jflannel:VERSION
python3 - "$layout/index.json" "$version" <<'PY'
import json, sys
path, version = sys.argv[1], sys.argv[2]
with open(path) as f:
    index = json.load(f)
assert len(index["manifests"]) == 1, index
ann = index["manifests"][0].setdefault("annotations", {})
# ref.name stays the bare tag (what umoci and skopeo's oci: transport address); containerd imports
# the full name, the one manifests/ uses, so no retagging is needed after ctr import
ann["org.opencontainers.image.ref.name"] = version
ann["io.containerd.image.name"] = "ghcr.io/jflannel/jflannel:" + version
with open(path, "w") as f:
    json.dump(index, f, separators=(",", ":"))
PY
touch -d "@$SOURCE_DATE_EPOCH" "$layout/index.json" "$layout/oci-layout"
find "$layout" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$SOURCE_DATE_EPOCH" -cf "$out.tmp" -C "$layout" .
# the size budget (issue 19): a build that passes it fails here, before anything uses the archive
budget_key=compressed.mib
[ "$COMPRESSION" = gzip ] && budget_key=compressed.gzip.mib
budget=$(sed -n "s/^${budget_key//./\\.}=//p" "$here/image-budget.properties")
# (MiB, a decimal: the issue's 45 MB is 42.9 MiB)
size_mib=$(awk -v s="$(stat -c %s "$out.tmp")" 'BEGIN { printf "%.2f", s / 1048576 }')
if awk -v s="$size_mib" -v b="$budget" 'BEGIN { exit !(s > b) }'; then
    log "FAILED: the archive is $size_mib MiB, over the budget of $budget MiB (packaging/image-budget.properties, docs/image.md)"
    rm -f "$out.tmp"; exit 1
fi
mv -f "$out.tmp" "$out"
rm -rf "$bundle" "$layout" # the archive holds the layout; logs stay in $work
log "wrote $out ($(du -h "$out" | cut -f1), $(( $(date +%s) - start )) s)"
