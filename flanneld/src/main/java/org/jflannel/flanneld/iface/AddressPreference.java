package org.jflannel.flanneld.iface;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/**
 * Which address of an interface flannel uses (upstream {@code pkg/ip/iface.go}): global unicast
 * before link-local, permanent before non-permanent, non-temporary before temporary; deprecated
 * addresses and anything else (loopback, multicast) are never used. The sort is stable, so the
 * kernel's order breaks ties.
 */
final class AddressPreference {
    private static final Comparator<NetSnapshot.Addr> ORDER = Comparator
            .comparing((NetSnapshot.Addr a) -> !IpLiteral.isGlobalUnicast(a.ip()))
            .thenComparing(a -> !a.permanent())
            .thenComparing(NetSnapshot.Addr::temporary);

    private AddressPreference() {
    }

    /** Usable addresses of one family, best first. */
    static List<InetAddress> usable(NetSnapshot.Iface iface, boolean ipv6) {
        return iface.addresses().stream()
                .filter(a -> ipv6 ? a.ip() instanceof Inet6Address : a.ip() instanceof Inet4Address)
                .filter(a -> !a.deprecated())
                .filter(a -> IpLiteral.isGlobalUnicast(a.ip()) || IpLiteral.isLinkLocalUnicast(a.ip()))
                .sorted(ORDER)
                .map(NetSnapshot.Addr::ip)
                .toList();
    }

    static Optional<Inet4Address> best4(NetSnapshot.Iface iface) {
        return usable(iface, false).stream().findFirst().map(Inet4Address.class::cast);
    }

    static Optional<Inet6Address> best6(NetSnapshot.Iface iface) {
        return usable(iface, true).stream().findFirst().map(Inet6Address.class::cast);
    }
}
