#!/bin/sh
# The base root filesystem's finishing steps (mmdebstrap --variant=extract calls this as a customize hook,
# ROOT=$1): extract unpacks the packages without running dpkg, so this script does the few things their
# maintainer scripts would have done that the image needs, and removes what no process in the image uses.
# (docs/image.md, "Base OS".)
set -eu
r=${1:?usage: fixup.sh ROOTFS}
# users and groups: base-passwd's postinst copies its masters
cp "$r/usr/share/base-passwd/passwd.master" "$r/etc/passwd"
cp "$r/usr/share/base-passwd/group.master" "$r/etc/group"
# the CA bundle: update-ca-certificates with every certificate selected (ca-certificates' default)
mkdir -p "$r/etc/ssl/certs"
find "$r/usr/share/ca-certificates" -name '*.crt' | LC_ALL=C sort | xargs cat > "$r/etc/ssl/certs/ca-certificates.crt"
# iptables' alternatives (its postinst, verbatim in effect): the iptables-wrapper switches them
chroot "$r" /bin/sh -e -c '
for fam in iptables ip6tables; do
    for v in legacy:10 nft:20; do
        update-alternatives --quiet --install /usr/sbin/$fam $fam /usr/sbin/$fam-${v%:*} ${v#*:} \
            --slave /usr/sbin/$fam-restore $fam-restore /usr/sbin/$fam-${v%:*}-restore \
            --slave /usr/sbin/$fam-save $fam-save /usr/sbin/$fam-${v%:*}-save
    done
done'
# nothing in the image reads these: documentation (copyright files kept), locales, iconv modules
# (gconv, 8 MB), OpenSSL's tool, libssl and its modules (ca-certificates' update tool's; the daemon's TLS
# is Java's; libcrypto stays: charon's openssl plugin links it, and OpenSSL 3's default provider is built
# into it), dpkg's own maintainer tooling, debconf (perl, and there is no perl)
find "$r/usr/share/doc" -type f ! -name copyright -delete 2>/dev/null || true
find "$r/usr/share/doc" -type d -empty -delete 2>/dev/null || true
rm -rf "$r/usr/share/man" "$r/usr/share/info" "$r/usr/share/locale" "$r/usr/share/lintian" \
    "$r/usr/lib/x86_64-linux-gnu/gconv" "$r/usr/bin/openssl" "$r/usr/lib/x86_64-linux-gnu/libssl.so.3" \
    "$r/usr/lib/x86_64-linux-gnu/engines-3" \
    "$r/usr/lib/x86_64-linux-gnu/ossl-modules" "$r/usr/share/perl5" "$r/usr/share/debconf" \
    "$r/var/cache/debconf" "$r/usr/share/zsh" "$r/usr/share/bash-completion"
rm -f "$r"/var/cache/apt/archives/*.deb "$r"/var/log/*.log
# dpkg's and tar's programs (dpkg is here for update-alternatives alone, which the iptables wrapper runs;
# nothing installs packages: there is no apt), the certificates' sources (the bundle above is made) and
# the libraries only they, or nothing, link: no ELF file left in the image and no JDK library names
# them (objdump -p, NEEDED; session 9, docs/image.md). glibc's NSS modules, libresolv and libgcc_s stay
# (glibc loads them itself)
for f in dpkg dpkg-deb dpkg-divert dpkg-maintscript-helper dpkg-query dpkg-realpath dpkg-split \
         dpkg-statoverride dpkg-trigger tar; do
    rm -f "$r/usr/bin/$f"
done
for f in dpkg-fsys-usrunmess dpkg-preconfigure dpkg-reconfigure rmt-tar tarcat installkernel \
         start-stop-daemon update-ca-certificates update-passwd; do
    rm -f "$r/usr/sbin/$f"
done
rm -rf "$r/usr/share/ca-certificates" "$r/usr/share/dpkg"
# (libzstd and liblzma stay since issue 39: libstrongswan links libsystemd, which links them)
for l in libmvec.so.1 libbz2.so.1* libtic.so.6* libnsl.so.1 libz.so.1* \
         libc_malloc_debug.so.0 libmemusage.so libpcprofile.so libthread_db.so.1 libBrokenLocale.so.1 \
         libanl.so.1 libutil.so.1 libdebconfclient.so.0*; do
    rm -f "$r/usr/lib/x86_64-linux-gnu/"$l
done
# strongSwan (the ipsec backend's charon, issue 39; docs/ipsec.md, docs/image.md): only what charon runs
# with the strongswan.conf flanneld writes (backend-ipsec CharonConf: its "load" list, no include of
# /etc/strongswan.d): charon, libcharon, libstrongswan and those plugins. Out: the other plugins, swanctl
# and its libvici (flanneld is the VICI client), the plugins' and swanctl's configuration and templates,
# xfrmi and _updown (the updown plugin's script; not loaded), apparmor and logcheck files, the
# development symlinks. ImageIT checks that every library these files link is in the image.
plugins="random nonce aes sha1 sha2 hmac kdf gmp openssl pem pkcs1 x509 kernel-netlink socket-default vici"
for p in "$r"/usr/lib/ipsec/plugins/libstrongswan-*.so; do
    n=${p##*/libstrongswan-}
    case " $plugins " in *" ${n%.so} "*) ;; *) rm -f "$p" ;; esac
done
for p in $plugins; do
    [ -f "$r/usr/lib/ipsec/plugins/libstrongswan-$p.so" ] || { echo "fixup.sh: strongSwan plugin $p missing" >&2; exit 1; }
done
[ -x "$r/usr/lib/ipsec/charon" ] || { echo "fixup.sh: /usr/lib/ipsec/charon missing" >&2; exit 1; }
rm -rf "$r/usr/sbin/swanctl" "$r/usr/lib/ipsec/libvici.so"* "$r/usr/lib/ipsec/libcharon.so" \
    "$r/usr/lib/ipsec/libstrongswan.so" "$r/usr/lib/ipsec/xfrmi" "$r/usr/lib/ipsec/_updown" \
    "$r/etc/swanctl" "$r/etc/strongswan.d" "$r/etc/strongswan.conf" "$r/usr/share/strongswan" \
    "$r/etc/apparmor.d" "$r/etc/logcheck"
