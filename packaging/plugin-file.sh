#!/usr/bin/env bash
# Makes the CNI plugin's single file (docs/image.md, "The CNI plugin: one file"):
#
#   packaging/plugin-file.sh BUNDLE_DIR ID OUT
#
# OUT = the static launcher (packaging/src/launcher/flannel-launcher.c, built here with Debian's
# musl-gcc) + an ustar archive of BUNDLE_DIR (the plugin's runtime with glibc's loader and libraries,
# its jars and class-data archive) + a 48-byte trailer: "JFLNPAY1", the archive's offset and size
# (u64, little-endian) and ID (12 hex digits, NUL-padded to 24 bytes), the name the launcher unpacks
# the bundle under (jflannel-ID). Deterministic: the archive's entries are sorted, owned by 0:0, and
# carry their files' own times (the class-data archive checks its jar's), which the caller sets.
set -euo pipefail
src=${1:?usage: plugin-file.sh BUNDLE_DIR ID OUT}
id=${2:?usage: plugin-file.sh BUNDLE_DIR ID OUT}
out=${3:?usage: plugin-file.sh BUNDLE_DIR ID OUT}
here=$(cd "$(dirname "$0")" && pwd)
[[ $id =~ ^[0-9a-f]{12}$ ]] || { echo "plugin-file: ID must be 12 hex digits, got \"$id\"" >&2; exit 2; }
[ -d "$src" ] || { echo "plugin-file: BUNDLE_DIR $src is not a directory" >&2; exit 2; }
command -v musl-gcc >/dev/null || { echo "plugin-file: musl-gcc missing (apt-get install musl-tools)" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# -static: no loader, no libc on the host; -s: no symbols; the same source gives the same bytes
musl-gcc -static -Os -s -Wall -Wextra -Werror -Wno-format-truncation -o "$tmp/launcher" "$here/src/launcher/flannel-launcher.c"
# --hard-dereference: a file hard-linked to one outside the bundle (the daemon's runtime) is stored whole
tar --format=ustar --sort=name --owner=0 --group=0 --numeric-owner --hard-dereference \
    -cf "$tmp/payload.tar" -C "$src" .
offset=$(stat -c %s "$tmp/launcher")
size=$(stat -c %s "$tmp/payload.tar")
le64() { python3 -c 'import struct,sys; sys.stdout.buffer.write(struct.pack("<Q", int(sys.argv[1])))' "$1"; }
{
    cat "$tmp/launcher" "$tmp/payload.tar"
    printf 'JFLNPAY1'
    le64 "$offset"
    le64 "$size"
    printf '%s' "$id"
    head -c 12 /dev/zero
} > "$out.tmp"
chmod 0755 "$out.tmp"
mv -f "$out.tmp" "$out"
