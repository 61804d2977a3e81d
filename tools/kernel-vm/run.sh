#!/usr/bin/env bash
# Boots Debian 12's own kernel (which has WireGuard as a module) under qemu-system-x86_64 and runs
# one command in it, as root, with the host's root filesystem seen read-only at the same paths.
# See README.md beside this file.
#
#   tools/kernel-vm/run.sh [OPTIONS] -- COMMAND [ARGS...]
#
# Exit status: the command's own; 124 if the timeout ran out; 125 if the VM could not be set up,
# did not boot, or ended without reporting the command's status (or the guest could not cd).
set -euo pipefail

readonly EXIT_TIMEOUT=124 EXIT_VM=125
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
cache_root=${JFLANNEL_VM_CACHE:-/var/cache/jflannel/kernel-vm}
timeout_s=300
mem_mb=1536
cpus=2
p9_cache=loose
verbose=0
shares=()
overlays=()
extra_modules=()
envs=()
# Loaded from the initramfs before the command runs; their dependencies come from modules.dep.
# Anything else is loaded on demand by the kernel (busybox modprobe over the cached module tree).
base_modules=(virtio_pci 9pnet_virtio 9p overlay virtio_rng wireguard veth)

usage() {
    cat <<'EOF'
Usage: tools/kernel-vm/run.sh [OPTIONS] -- COMMAND [ARGS...]

Boots Debian 12's kernel under qemu and runs COMMAND as root inside it, in the same working
directory, with the host's / mounted read-only at the same paths (tmpfs on /tmp, /var/tmp, /run,
/root). COMMAND's stdout and stderr come out on this script's stdout; the exit status is
COMMAND's, or 124 (timed out) or 125 (VM setup/boot failure).

Options:
  --timeout SECONDS   bound on the whole run, boot included (default 300)
  --share DIR         mount host DIR read-write at the same path in the guest (repeatable)
  --overlay DIR       make host DIR writable in the guest, the changes kept in guest memory and
                      dropped at the end (overlayfs; e.g. a Maven project's directory; repeatable)
  --env NAME[=VALUE]  pass an environment variable (the host's value if no =VALUE; repeatable);
                      PATH, LANG, LC_ALL, JAVA_HOME and TZ are passed when set
  --module NAME       also load kernel module NAME (and its dependencies) at boot (repeatable)
  --mem MB            guest memory (default 1536)
  --cpus N            guest CPUs (default 2)
  --9p-cache MODE     9p cache mode for the read-only host root: loose (default) or none
  -v, --verbose       say what happens, with timings, on stderr
  -h, --help          this text

Environment: JFLANNEL_VM_CACHE (cache dir, default /var/cache/jflannel/kernel-vm),
JFLANNEL_VM_KERNEL_PKG (kernel package, default: what linux-image-amd64 depends on, or the one
already cached), JFLANNEL_VM_ACCEL (auto, tcg or kvm; default auto).
EOF
}

log() { printf 'kernel-vm: %s\n' "$*" >&2; }
vlog() { if ((verbose)); then log "$@"; fi; }
die() {
    log "$*"
    exit "$EXIT_VM"
}
now() { printf '%s' "${EPOCHREALTIME/,/.}"; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }

while (($#)); do
    case $1 in
    --timeout) timeout_s=${2:?--timeout needs a value}; shift 2 ;;
    --timeout=*) timeout_s=${1#*=}; shift ;;
    --share) shares+=("${2:?--share needs a directory}"); shift 2 ;;
    --share=*) shares+=("${1#*=}"); shift ;;
    --overlay) overlays+=("${2:?--overlay needs a directory}"); shift 2 ;;
    --overlay=*) overlays+=("${1#*=}"); shift ;;
    --env) envs+=("${2:?--env needs NAME[=VALUE]}"); shift 2 ;;
    --env=*) envs+=("${1#*=}"); shift ;;
    --module) extra_modules+=("${2:?--module needs a name}"); shift 2 ;;
    --module=*) extra_modules+=("${1#*=}"); shift ;;
    --mem) mem_mb=${2:?--mem needs a value}; shift 2 ;;
    --mem=*) mem_mb=${1#*=}; shift ;;
    --cpus) cpus=${2:?--cpus needs a value}; shift 2 ;;
    --cpus=*) cpus=${1#*=}; shift ;;
    --9p-cache) p9_cache=${2:?--9p-cache needs a value}; shift 2 ;;
    --9p-cache=*) p9_cache=${1#*=}; shift ;;
    -v | --verbose) verbose=1; shift ;;
    -h | --help) usage; exit 0 ;;
    --) shift; break ;;
    *) usage >&2; exit "$EXIT_VM" ;;
    esac
done
(($#)) || { usage >&2; exit "$EXIT_VM"; }
[[ $timeout_s =~ ^[1-9][0-9]*$ ]] || die "--timeout must be a positive number of seconds"
[[ $mem_mb =~ ^[1-9][0-9]*$ ]] || die "--mem must be a positive number of MB"
[[ $cpus =~ ^[1-9][0-9]*$ ]] || die "--cpus must be a positive number"
[[ $p9_cache == loose || $p9_cache == none ]] || die "--9p-cache must be loose or none"
((EUID == 0)) || die "must run as root (apt-get, and the guest's 9p view of / as root)"
[[ $PWD != *$'\n'* ]] || die "the working directory's name has a newline"
for i in "${!shares[@]}"; do
    [[ -d ${shares[i]} ]] || die "--share ${shares[i]}: not a directory"
    shares[i]=$(cd "${shares[i]}" && pwd -P)
    [[ ${shares[i]} != *$'\n'* && ${shares[i]} != *,* ]] || die "--share: unusable directory name"
done
for i in "${!overlays[@]}"; do
    [[ -d ${overlays[i]} ]] || die "--overlay ${overlays[i]}: not a directory"
    overlays[i]=$(cd "${overlays[i]}" && pwd -P)
    [[ ${overlays[i]} != / && ${overlays[i]} != *$'\n'* && ${overlays[i]} != *[,:]* ]] \
        || die "--overlay: unusable directory name"
done

started=$(now)
deadline=$((SECONDS + timeout_s))
tmp=$(mktemp -d /tmp/kernel-vm.XXXXXX)
qemu_pid=
# shellcheck disable=SC2317 # called by the EXIT trap
cleanup() {
    if [[ -n $qemu_pid ]] && kill -0 "$qemu_pid" 2>/dev/null; then
        kill "$qemu_pid" 2>/dev/null || true
        for _ in 1 2 3 4 5 6 7 8 9 10; do
            kill -0 "$qemu_pid" 2>/dev/null || break
            sleep 0.2
        done
        kill -9 "$qemu_pid" 2>/dev/null || true
    fi
    rm -rf "$tmp"
    if [[ -n ${stage:-} ]]; then rm -rf "$stage"; fi
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# ---- host tools --------------------------------------------------------------------------------
apt_get() {
    DEBIAN_FRONTEND=noninteractive timeout 600 apt-get -q -o DPkg::Lock::Timeout=120 "$@" >&2
}
if ! command -v qemu-system-x86_64 >/dev/null; then
    log "installing qemu-system-x86 with apt-get (--no-install-recommends)"
    apt_get install -y --no-install-recommends qemu-system-x86 \
        || { apt_get update && apt_get install -y --no-install-recommends qemu-system-x86; } \
        || die "could not install qemu-system-x86"
fi

# ---- cache: kernel package and busybox-static, unpacked, never installed ------------------------
mkdir -p "$cache_root"
exec {lock_fd}>"$cache_root/.lock"
timeout_left() { local left=$((deadline - SECONDS)); echo $((left > 0 ? left : 1)); }
flock -w "$(timeout_left)" "$lock_fd" || die "timed out waiting for the cache lock $cache_root/.lock"

# fetch_deb PKG DEST: apt-get download PKG (no install) and unpack it into DEST.
fetch_deb() {
    local pkg=$1 dest=$2 dl
    dl=$(mktemp -d "$stage/dl.XXXXXX")
    if ! (cd "$dl" && apt_get download -o APT::Sandbox::User=root "$pkg"); then
        apt_get update || true
        (cd "$dl" && apt_get download -o APT::Sandbox::User=root "$pkg") || die "apt-get download $pkg failed"
    fi
    dpkg-deb -x "$dl"/*.deb "$dest"
    (cd "$dl" && ls -- *.deb) >"$dest/.from-deb"
    rm -rf "$dl"
}

busybox_dir=$cache_root/busybox-static
if [[ ! -f $busybox_dir/.complete ]]; then
    stage=$(mktemp -d "$cache_root/.stage.XXXXXX")
    log "fetching busybox-static (apt-get download, unpacked into $busybox_dir)"
    fetch_deb busybox-static "$stage/bb"
    [[ -x $stage/bb/bin/busybox ]] || die "busybox-static has no bin/busybox"
    touch "$stage/bb/.complete"
    rm -rf "$busybox_dir"
    mv "$stage/bb" "$busybox_dir"
    rm -rf "$stage"
    stage=
fi
busybox=$busybox_dir/bin/busybox

kernel_pkg=${JFLANNEL_VM_KERNEL_PKG:-}
if [[ -z $kernel_pkg ]]; then
    # The newest kernel already cached, else the one Debian's linux-image-amd64 depends on now.
    kernel_pkg=$(find "$cache_root" -mindepth 2 -maxdepth 2 -path "$cache_root/linux-image-*/.complete" \
        -printf '%h\n' | sed 's|.*/||' | sort -V | tail -n 1)
fi
if [[ -z $kernel_pkg ]]; then
    resolve() { apt-cache depends linux-image-amd64 2>/dev/null | awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ { print $2; exit }'; }
    kernel_pkg=$(resolve)
    if [[ -z $kernel_pkg ]]; then
        apt_get update || true
        kernel_pkg=$(resolve)
    fi
    [[ -n $kernel_pkg ]] || die "cannot tell which kernel linux-image-amd64 depends on (apt-cache)"
fi
[[ $kernel_pkg =~ ^linux-image-[0-9][a-z0-9.+-]*$ ]] || die "unexpected kernel package name: $kernel_pkg"
kdir=$cache_root/$kernel_pkg
if [[ ! -f $kdir/.complete ]]; then
    stage=$(mktemp -d "$cache_root/.stage.XXXXXX")
    log "fetching $kernel_pkg (apt-get download, unpacked into $kdir; ~70 MB)"
    fetch_deb "$kernel_pkg" "$stage/x"
    mapfile -t kvers < <(ls "$stage/x/lib/modules")
    ((${#kvers[@]} == 1)) || die "$kernel_pkg: expected one lib/modules/<version>, found ${kvers[*]}"
    kver=${kvers[0]}
    mkdir -p "$stage/k/lib/modules"
    mv "$stage/x/boot/vmlinuz-$kver" "$stage/k/vmlinuz"
    mv "$stage/x/boot/config-$kver" "$stage/k/config"
    mv "$stage/x/lib/modules/$kver" "$stage/k/lib/modules/$kver"
    mv "$stage/x/.from-deb" "$stage/k/.from-deb"
    echo "$kver" >"$stage/k/kver"
    # The package leaves modules.dep to depmod at install time; busybox's depmod writes it here.
    "$busybox" depmod -b "$stage/k" "$kver" || die "depmod failed for $kernel_pkg"
    touch "$stage/k/.complete"
    rm -rf "$kdir"
    mv "$stage/k" "$kdir"
    rm -rf "$stage"
    stage=
fi
flock -u "$lock_fd"
kver=$(cat "$kdir/kver")
moddir=$kdir/lib/modules/$kver
vlog "kernel $kver from $(cat "$kdir/.from-deb"), cache $kdir"

# ---- initramfs ---------------------------------------------------------------------------------
# Modules to load, dependencies first, as paths relative to $moddir (those built in are skipped).
mapfile -t mod_paths < <(awk -v want="${base_modules[*]} ${extra_modules[*]}" '
    function norm(s) { gsub(/-/, "_", s); return s }
    function base(p) { sub(/.*\//, "", p); sub(/\.ko(\.[a-z]+)?$/, "", p); return norm(p) }
    function visit(p,    n, i, d) {
        if (p in seen) return
        seen[p] = 1
        n = split(deps[p], d, " ")
        for (i = 1; i <= n; i++) visit(d[i])
        print p
    }
    FILENAME ~ /modules\.builtin$/ { builtin[base($1)] = 1; next }
    {
        key = $1; sub(/:$/, "", key)
        deps[key] = ""
        for (i = 2; i <= NF; i++) deps[key] = deps[key] " " $i
        bypath[base(key)] = key
    }
    END {
        n = split(want, w, " ")
        for (i = 1; i <= n; i++) {
            k = norm(w[i])
            if (k in bypath) visit(bypath[k])
            else if (!(k in builtin)) { print "kernel-vm: no module " w[i] > "/dev/stderr"; bad = 1 }
        }
        exit bad
    }' "$moddir/modules.builtin" "$moddir/modules.dep") || die "module list does not resolve"
vlog "modules: ${mod_paths[*]##*/}"

root=$tmp/initramfs
conf=$root/etc/kernel-vm
mkdir -p "$root"/{bin,dev,proc,sys,newroot,lib/modules/"$kver"} "$conf"
mknod -m 600 "$root/dev/console" c 5 1
cp "$busybox" "$root/bin/busybox"
install -m 755 "$here/guest-init.sh" "$root/init"
for m in "${mod_paths[@]}"; do
    mkdir -p "$root/lib/modules/$kver/${m%/*}"
    cp "$moddir/$m" "$root/lib/modules/$kver/$m"
done
printf '%s\n' "${mod_paths[@]}" >"$conf/modules"
echo "$kver" >"$conf/kver"
echo "$moddir" >"$conf/moddir"
echo 512000 >"$conf/msize"
echo "$p9_cache" >"$conf/cache"
if ((${#shares[@]})); then printf '%s\n' "${shares[@]}" >"$conf/shares"; else : >"$conf/shares"; fi
if ((${#overlays[@]})); then printf '%s\n' "${overlays[@]}" >"$conf/overlays"; else : >"$conf/overlays"; fi
{
    echo '# written by tools/kernel-vm/run.sh: runs as root in the guest, chrooted into the host tree'
    printf 'export PATH=%q HOME=/root USER=root LOGNAME=root TERM=dumb\n' "$PATH"
    for v in LANG LC_ALL JAVA_HOME TZ; do
        if [[ -n ${!v:-} ]]; then printf 'export %s=%q\n' "$v" "${!v}"; fi
    done
    for e in "${envs[@]}"; do
        name=${e%%=*}
        [[ $name =~ ^[A-Za-z_][A-Za-z0-9_]*$ ]] || die "--env $e: bad name"
        if [[ $e == *=* ]]; then value=${e#*=}; else value=${!name-}; fi
        printf 'export %s=%q\n' "$name" "$value"
    done
    printf 'cd -- %q || { echo "kernel-vm: cannot enter the working directory in the guest" >&2; exit %d; }\n' \
        "$PWD" "$EXIT_VM"
    printf 'exec'
    printf ' %q' "$@"
    printf '\n'
} >"$conf/cmd.sh"
(cd "$root" && find . | "$busybox" cpio -o -H newc 2>/dev/null) | gzip -1 >"$tmp/initrd.gz"

# ---- qemu --------------------------------------------------------------------------------------
# KVM only if it really runs a guest: this host's /dev/kvm may exist without usable virtualization.
kvm_works() {
    [[ -r /dev/kvm && -w /dev/kvm ]] || return 1
    local out
    out=$(timeout 10 qemu-system-x86_64 -accel kvm -cpu host -m 128 -nodefaults -no-user-config \
        -display none -no-reboot -kernel "$kdir/vmlinuz" -initrd "$tmp/initrd.gz" \
        -append "console=ttyS0 quiet panic=-1 rdinit=/bin/busybox -- printf kvm%sok\\n -probe-" \
        -serial stdio -nic none </dev/null 2>/dev/null) || true
    [[ $out == *kvm-probe-ok* ]] # printed by the guest: the kernel's command line has no such text
}
accel=${JFLANNEL_VM_ACCEL:-auto}
case $accel in
auto) if kvm_works; then accel=kvm; else accel=tcg; fi ;;
kvm | tcg) ;;
*) die "JFLANNEL_VM_ACCEL must be auto, kvm or tcg" ;;
esac
if [[ $accel == kvm ]]; then
    accel_args=(-accel kvm -cpu host)
else
    accel_args=(-accel "tcg,thread=multi" -cpu max)
fi
vlog "accelerator $accel; setup took $(since "$started")s"

share_args=()
for i in "${!shares[@]}"; do
    share_args+=(-fsdev "local,id=share$i,path=${shares[i]},security_model=none"
        -device "virtio-9p-pci,fsdev=share$i,mount_tag=share$i")
done
console=$tmp/console.log
qemu_started=$(now)
qemu-system-x86_64 "${accel_args[@]}" -machine pc -m "$mem_mb" -smp "$cpus" \
    -nodefaults -no-user-config -display none -no-reboot -nic none \
    -kernel "$kdir/vmlinuz" -initrd "$tmp/initrd.gz" \
    -append "console=ttyS0 quiet panic=-1 rdinit=/init" \
    -chardev "file,id=console,path=$console" -serial chardev:console \
    -chardev stdio,id=out,signal=off -serial chardev:out \
    -fsdev local,id=hostroot,path=/,security_model=none,readonly=on,multidevs=remap \
    -device virtio-9p-pci,fsdev=hostroot,mount_tag=hostroot \
    -device virtio-rng-pci \
    "${share_args[@]}" </dev/null &
qemu_pid=$!

timed_out=0
boot_s=
while kill -0 "$qemu_pid" 2>/dev/null; do
    if ((SECONDS >= deadline)); then
        timed_out=1
        break
    fi
    if [[ -z $boot_s ]] && grep -aq JFLANNEL_VM_START "$console" 2>/dev/null; then
        boot_s=$(since "$qemu_started")
        vlog "boot to command: ${boot_s}s"
    fi
    sleep 0.1
done
if ((timed_out)); then
    log "timed out after ${timeout_s}s; console tail:"
    tail -n 20 "$console" >&2 || true
    exit "$EXIT_TIMEOUT"
fi
wait "$qemu_pid" || true
qemu_pid=
marker=$(grep -ao 'JFLANNEL_VM_EXIT=[0-9]*' "$console" | tail -n 1 || true)
if [[ -z $marker ]]; then
    log "the VM ended without reporting the command's exit status; console tail:"
    tail -n 40 "$console" >&2 || true
    exit "$EXIT_VM"
fi
vlog "command exit ${marker#*=}; total $(since "$started")s"
exit "${marker#*=}"
