package org.jflannel.flanneld.iface;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.util.Optional;
import org.jflannel.core.Ip4Net;
import org.jflannel.core.Ip6Net;

/** An IP literal as Go's {@code net.ParseIP} reads it; never a host name, never DNS. */
public final class IpLiteral {
    private IpLiteral() {
    }

    public static Optional<InetAddress> parse(String text) {
        if (text == null || text.isEmpty()) {
            return Optional.empty();
        }
        try {
            if (text.indexOf(':') >= 0) {
                long[] a = Ip6Net.parseAddress(text);
                return Optional.of(Ip6Net.toInet(a[0], a[1]));
            }
            return Optional.of(Ip4Net.toInet(Ip4Net.parseAddress(text)));
        } catch (IllegalArgumentException e) {
            return Optional.empty();
        }
    }

    public static Optional<Inet4Address> parse4(String text) {
        return parse(text).filter(Inet4Address.class::isInstance).map(Inet4Address.class::cast);
    }

    public static Optional<Inet6Address> parse6(String text) {
        return parse(text).filter(Inet6Address.class::isInstance).map(Inet6Address.class::cast);
    }

    /** The text Go prints for an address: dotted quad, or RFC 5952 compressed IPv6 without zone. */
    public static String format(InetAddress a) {
        byte[] b = a.getAddress();
        if (b.length == 4) {
            return a.getHostAddress();
        }
        long hi = 0;
        long lo = 0;
        for (int i = 0; i < 8; i++) {
            hi = (hi << 8) | (b[i] & 0xff);
            lo = (lo << 8) | (b[i + 8] & 0xff);
        }
        return Ip6Net.formatAddress(hi, lo);
    }

    /** Go's {@code IsGlobalUnicast}: not unspecified, loopback, multicast, link-local or the v4 broadcast. */
    static boolean isGlobalUnicast(InetAddress a) {
        if (a.isAnyLocalAddress() || a.isLoopbackAddress() || a.isMulticastAddress() || a.isLinkLocalAddress()) {
            return false;
        }
        byte[] b = a.getAddress();
        return !(b.length == 4 && (b[0] & b[1] & b[2] & b[3]) == (byte) 0xff);
    }

    static boolean isLinkLocalUnicast(InetAddress a) {
        return a.isLinkLocalAddress();
    }
}
