#!/bin/busybox sh
# PID 1 of the kernel-vm guest: busybox ash inside the initramfs that run.sh builds.
#
# Loads the modules listed in /etc/kernel-vm/modules (dependency order, resolved on the host
# from the kernel's modules.dep), mounts the host's root filesystem (9p, read-only) at /newroot
# with tmpfs on the writable places, mounts the --share directories read-write, then runs
# /etc/kernel-vm/cmd.sh with bash chrooted into /newroot. The command's stdout and stderr go to
# the second serial port (ttyS1), which run.sh streams to its own stdout; this script's messages
# and the exit marker go to the console (ttyS0), which run.sh keeps in a log file.
#
# Nothing here is meant to run on the host.

/bin/busybox mkdir -p /sbin /usr/bin /usr/sbin
/bin/busybox --install -s
export PATH=/bin:/sbin:/usr/bin:/usr/sbin

mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev

conf=/etc/kernel-vm
EXIT_VM_FALLBACK=125
say() { echo "kernel-vm-init: $*"; }
halt_vm() {
    sync
    poweroff -f
    echo o >/proc/sysrq-trigger
    sleep 10
}
fail() {
    say "FAILED: $*"
    halt_vm
}

say "kernel $(uname -r) up after $(cut -d' ' -f1 /proc/uptime)s"
kver=$(cat "$conf/kver")
msize=$(cat "$conf/msize")
cache=$(cat "$conf/cache")

while IFS= read -r m; do
    insmod "/lib/modules/$kver/$m" || fail "insmod $m"
done <"$conf/modules"

# The 9p device shows up once virtio_pci has probed it; give it a moment if it is late.
mkdir -p /newroot
tries=0
until mount -t 9p -o "trans=virtio,version=9p2000.L,ro,msize=$msize,cache=$cache" hostroot /newroot; do
    tries=$((tries + 1))
    [ "$tries" -lt 50 ] || fail "mount of the host root (9p tag hostroot)"
    sleep 0.1
done

# The kernel runs /sbin/modprobe in this initramfs's root to load modules on demand (veth, vxlan,
# nf_tables, ...): give busybox modprobe the whole module tree of the cached kernel package.
moddir=/newroot$(cat "$conf/moddir")
if [ -f "$moddir/modules.dep" ]; then
    mount --bind "$moddir" "/lib/modules/$kver" || say "no on-demand module loading"
fi

tmpfs_at() { # DIR MODE: a fresh tmpfs on a real directory of the host's tree (not on a symlink)
    if [ -d "/newroot$1" ] && [ ! -L "/newroot$1" ]; then
        mount -t tmpfs -o "mode=$2,nosuid,nodev" tmpfs "/newroot$1" || fail "tmpfs on $1"
    fi
}
# DIR: the host's DIR with the guest's changes kept in memory (overlayfs, tmpfs upper layer),
# else a fresh tmpfs.
mkdir -p /upper
mount -t tmpfs -o mode=0755 tmpfs /upper || fail "tmpfs for the overlays"
overlay_at() {
    if [ -d "/newroot$1" ] && [ ! -L "/newroot$1" ]; then
        u=/upper/$(echo "$1" | tr / _)
        mkdir -p "$u/upper" "$u/work"
        chmod "$(stat -c %a "/newroot$1")" "$u/upper"
        chown "$(stat -c %u:%g "/newroot$1")" "$u/upper"
        mount -t overlay overlay -o "lowerdir=/newroot$1,upperdir=$u/upper,workdir=$u/work" "/newroot$1" \
            || tmpfs_at "$1" "$2"
    fi
}
while IFS= read -r dir; do
    overlay_at "$dir" 0755
done <"$conf/overlays"
overlay_at /tmp 1777
overlay_at /var/tmp 1777
overlay_at /root 0700
tmpfs_at /run 0755
tmpfs_at /var/run 0755

mount -t proc proc /newroot/proc || fail "proc"
mount -t sysfs sysfs /newroot/sys || fail "sysfs"
mount -t cgroup2 cgroup2 /newroot/sys/fs/cgroup 2>/dev/null || true
mount -t devtmpfs devtmpfs /newroot/dev || fail "devtmpfs"
mkdir -p /newroot/dev/pts /newroot/dev/shm
mount -t devpts -o newinstance,ptmxmode=0666 devpts /newroot/dev/pts || true
mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /newroot/dev/shm || true

i=0
while IFS= read -r dir; do
    mkdir -p "/newroot$dir" 2>/dev/null || true
    mount -t 9p -o "trans=virtio,version=9p2000.L,rw,msize=$msize,cache=none" "share$i" "/newroot$dir" \
        || fail "mount of --share $dir"
    i=$((i + 1))
done <"$conf/shares"

hostname kernel-vm
ip link set lo up

mkdir -p /newroot/run/kernel-vm
cp "$conf/cmd.sh" /newroot/run/kernel-vm/cmd.sh
stty -F /dev/ttyS1 raw -echo -onlcr || fail "stty on ttyS1"

say "JFLANNEL_VM_START uptime=$(cut -d' ' -f1 /proc/uptime)"
# Through a pipe, so that the command's stdout and stderr are no terminal (isatty is false, as
# under CI). cat is the last opener of ttyS1: its close waits for the output to drain.
{
    chroot /newroot /usr/bin/env -i /bin/bash --noprofile --norc /run/kernel-vm/cmd.sh </dev/null
    echo $? >/exit-status
} 2>&1 | cat >/dev/ttyS1
rc=$(cat /exit-status 2>/dev/null || echo "$EXIT_VM_FALLBACK")
say "JFLANNEL_VM_EXIT=$rc uptime=$(cut -d' ' -f1 /proc/uptime)"
halt_vm
