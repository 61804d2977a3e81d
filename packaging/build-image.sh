#!/usr/bin/env bash
# Builds the jflannel container image as an OCI archive, daemonless (no Docker, no container runtime):
#
#   packaging/build-image.sh VERSION OUT.oci.tar      (root; bin/image and the Maven build call it)
#
# Needs flanneld/target and cni-flannel/target built (mvn package), mmdebstrap, umoci, the Temurin 25
# JDK at $JFLANNEL_JDK (default /usr/lib/jvm/temurin-25-jdk-amd64), binutils (strip, objdump).
#
# Three layers, in this order (docs/image.md says why each choice):
#   1. base OS: Debian bookworm minbase + iptables, nftables, ca-certificates (mmdebstrap from Debian's
#      packages), documentation and locales left out, plus our iptables-wrapper (nft/legacy choice);
#   2. Java runtimes: /opt/jflannel/jre (the daemon's jlink) and the CNI bundle's own java.base runtime;
#   3. our application: jars, launchers, AppCDS archives dumped inside the root filesystem (chroot) for
#      the image's own paths and runtime.
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
# only optional code paths reference: Jackson's java.beans support, Vert.x's codegen, Netty's JFR events)
FLANNELD_MODULES=java.base,java.logging,java.naming,java.net.http,java.sql,jdk.httpserver,jdk.unsupported
CNI_MODULES=java.base

log() { echo "image: $*" >&2; }
[ "$(id -u)" -eq 0 ] || { log "must run as root (mmdebstrap, umoci unpack, chroot)"; exit 1; }
for t in mmdebstrap umoci objdump strip musl-gcc; do
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
# what decides the base: the package set, the apt sources, this section of the script
base_key=$( { echo "$SUITE minbase iptables nftables ca-certificates $SOURCE_DATE_EPOCH merged-usr v2";
              cat /etc/apt/sources.list /etc/apt/sources.list.d/* 2>/dev/null || true; } | sha256sum | cut -c1-16)
base_tar="$CACHE/base-$base_key.tar"
if [ ! -f "$base_tar" ]; then
    log "base: mmdebstrap $SUITE minbase (debs cached in $CACHE/debs)"
    # merged-usr hook: /usr merged by mmdebstrap itself (otherwise the usrmerge package pulls in 47 MB of perl)
    # path-exclude: no man pages, docs (copyright files kept), locales or info in the image
    mmdebstrap --variant=minbase --include=iptables,nftables,ca-certificates --mode=root --format=tar \
        --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*' \
        --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-include=/usr/share/locale/locale.alias' \
        --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
        --dpkgopt='path-exclude=/usr/share/lintian/*' --dpkgopt='path-exclude=/usr/share/linda/*' \
        --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr --skip=download/empty --skip=essential/unlink \
        --setup-hook='mkdir -p "$1"/var/cache/apt/archives/' \
        --setup-hook="sync-in $CACHE/debs /var/cache/apt/archives/" \
        --customize-hook="sync-out /var/cache/apt/archives $CACHE/debs" \
        --customize-hook='rm -f "$1"/var/cache/apt/archives/*.deb "$1"/var/log/*.log "$1"/var/log/apt/*' \
        "$SUITE" "$base_tar.tmp" >"$work/mmdebstrap.log" 2>&1 || { tail -20 "$work/mmdebstrap.log" >&2; exit 1; }
    mv -f "$base_tar.tmp" "$base_tar"
    # older bases (other keys) are dead weight
    find "$CACHE" -maxdepth 1 -name 'base-*.tar' ! -name "base-$base_key.tar" -delete
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
repack "Debian $SUITE minbase + iptables, nftables, ca-certificates; iptables-wrapper"
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
# the plugin's compressed: it lives on every node, and its classes come from its archive
jlink_runtime "$CNI_MODULES" "$cnistage/jre" --compress=zip-6
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
mv "$cnistage/jre" "$work/cni-jre"
mkdir -p "$opt/cni/$cnibundle"
mv "$work/cni-jre" "$opt/cni/$cnibundle/jre"
repack "Java runtimes: jlink of Temurin $("$JDK/bin/java" -version 2>&1 | head -1 | cut -d'"' -f2) ($FLANNELD_MODULES; CNI: $CNI_MODULES)"
log "layer 2 (Java runtimes) done"

# --- 3. the application -------------------------------------------------------------------------------
cp "$flanneld_jar" "$opt/app/flanneld.jar"
cp "$repo"/flanneld/target/lib/*.jar "$opt/app/lib/"
install -m 0755 "$here/src/image/opt/jflannel/bin/flanneld" "$opt/bin/flanneld"
cp "$cnistage/cni-flannel.jar" "$opt/cni/$cnibundle/"
cp -r "$cnistage/lib" "$opt/cni/$cnibundle/"
echo "$version" > "$opt/VERSION"

# an AppCDS archive records the size and mtime of every jar it was dumped from: the final times first
stamp "$rootfs"

# runs a command inside the root filesystem: a private mount namespace with /proc and /dev, gone after
in_rootfs() {
    unshare --mount --propagation private -- sh -c '
        r=$1; shift
        mount -t proc proc "$r/proc" && mount --rbind /dev "$r/dev" && exec chroot "$r" "$@"' sh "$rootfs" "$@"
}
log "AppCDS: flanneld archives (etcd, kube) for /opt/jflannel/app"
mkdir -p "$rootfs/tmp/cds"
cp "$repo"/flanneld/cds/etcd.classlist "$repo"/flanneld/cds/kube.classlist "$rootfs/tmp/cds/"
for mode in etcd kube; do
    # the launcher's module options too: an archive dumped without them loses its optimized module
    # graph at run time ("Mismatched values for property jdk.module.enable.native.access")
    in_rootfs /opt/jflannel/jre/bin/java -Xshare:dump -XX:SharedClassListFile=/tmp/cds/$mode.classlist \
        --enable-native-access=ALL-UNNAMED --sun-misc-unsafe-memory-access=allow \
        -XX:SharedArchiveFile=/opt/jflannel/app/flanneld-$mode.jsa -Xlog:cds=off -Xlog:cds+dynamic=off \
        -cp /opt/jflannel/app/flanneld.jar >"$work/cds-$mode.log" 2>&1 || { tail "$work/cds-$mode.log" >&2; exit 1; }
done
# the CNI plugin's archive is dumped where the plugin runs: /opt/cni/bin/<bundle> on the host, which
# the init container mounts at the same path (an archive records its jar's absolute path)
log "AppCDS: CNI plugin archive for /opt/cni/bin/$cnibundle"
mkdir -p "$rootfs/opt/cni/bin"
cp -a "$opt/cni/$cnibundle" "$rootfs/opt/cni/bin/"
d=/opt/cni/bin/$cnibundle
in_rootfs "$d/jre/bin/java" -Xint -XX:-UsePerfData -Xss512k -XX:DumpLoadedClassList=/tmp/cds/flannel.classlist \
    -cp "$d/cni-flannel.jar" org.jflannel.cni.CdsTraining
in_rootfs "$d/jre/bin/java" -Xint -XX:-UsePerfData -Xss512k -Xshare:dump -XX:SharedClassListFile=/tmp/cds/flannel.classlist \
    -XX:SharedArchiveFile="$d/flannel.jsa" -Xlog:cds=off -Xlog:cds+dynamic=off -cp "$d/cni-flannel.jar" >"$work/cds-cni.log" 2>&1 \
    || { tail "$work/cds-cni.log" >&2; exit 1; }
mv "$rootfs$d/flannel.jsa" "$opt/cni/$cnibundle/flannel.jsa"
rm -rf "$rootfs/opt/cni" "$rootfs/tmp/cds" "$rootfs"/tmp/hsperfdata_* "$rootfs"/tmp/flannel-cds*
chmod -R a+rX "$opt"
# the plugin as one file: the static launcher + the bundle as its payload (packaging/plugin-file.sh);
# install-cni-plugin copies it with the unpacked bundle beside it, upstream's init container copies
# /flannel (the same file, a hard link) alone and the first run unpacks the bundle
stamp "$rootfs"
log "CNI plugin file: static launcher + $cnibundle"
"$here/plugin-file.sh" "$opt/cni/$cnibundle" "$hash" "$opt/cni/flannel"
ln -f "$opt/cni/flannel" "$rootfs/flannel"
# upstream's paths (its kube-flannel.yml runs these): /opt/bin/flanneld, /opt/bin/install-conf SRC DST
mkdir -p "$rootfs/opt/bin"
ln -sfn ../jflannel/bin/flanneld "$rootfs/opt/bin/flanneld"
install -m 0755 "$here/src/image/opt/bin/install-conf" "$rootfs/opt/bin/install-conf"

repack "jflannel $version: flanneld, the CNI plugin ($cnibundle, /flannel), AppCDS archives, upstream's /opt/bin"
log "layer 3 (application) done"

umoci config --image "$layout:$version" --no-history --created "$created" --author "jflannel" \
    --architecture amd64 --os linux --config.cmd /opt/jflannel/bin/flanneld \
    --config.env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    --config.label org.opencontainers.image.title=jflannel --config.label "org.opencontainers.image.version=$version"
umoci gc --layout "$layout"
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
mv -f "$out.tmp" "$out"
rm -rf "$bundle" "$layout" # the archive holds the layout; logs stay in $work
log "wrote $out ($(du -h "$out" | cut -f1), $(( $(date +%s) - start )) s)"
