#!/bin/sh
# mmdebstrap --extract-hook (ROOT=$1): strongswan-charon's one program, /usr/lib/ipsec/charon, taken from its
# .deb without the package's dependencies. Its Depends name strongswan-starter (the ipsec.conf tool, which
# pulls adduser and debconf, both perl) and iproute2: charon needs neither (flanneld drives it over VICI,
# and its kernel-netlink plugin talks to the kernel itself). The other strongSwan packages are --include'd
# (their dependencies are libraries charon links). The version is the candidate of the image's own apt
# sources (mmdebstrap's apt configuration), the .deb cached beside the others (docs/image.md, "Base OS").
set -eu
r=${1:?usage: charon-from-deb.sh ROOTFS (an mmdebstrap hook)}
: "${MMDEBSTRAP_APT_CONFIG:?charon-from-deb.sh: run as an mmdebstrap hook (MMDEBSTRAP_APT_CONFIG unset)}"
export APT_CONFIG="$MMDEBSTRAP_APT_CONFIG"
archives="$r/var/cache/apt/archives"
ver=$(apt-cache policy strongswan-charon | sed -n 's/^ *Candidate: //p')
case "$ver" in ""|"(none)") echo "charon-from-deb.sh: strongswan-charon has no candidate in the image's apt sources" >&2; exit 1 ;; esac
deb="$archives/strongswan-charon_$(echo "$ver" | sed 's/:/%3a/')_amd64.deb"
if [ ! -f "$deb" ]; then
    (cd "$archives" && apt-get download -q=2 "strongswan-charon=$ver")
fi
[ -f "$deb" ] || { echo "charon-from-deb.sh: $deb missing after apt-get download" >&2; exit 1; }
dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$r" ./usr/lib/ipsec/charon
[ -x "$r/usr/lib/ipsec/charon" ] || { echo "charon-from-deb.sh: $deb has no ./usr/lib/ipsec/charon" >&2; exit 1; }
