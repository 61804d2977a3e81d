package org.jflannel.backend.hostgw;

import java.net.InetAddress;
import org.jflannel.linuxnet.netlink.IpPrefix;

/** Prefix arithmetic on {@link IpPrefix} that linux-net does not need itself. */
final class Prefixes {
    private Prefixes() {
    }

    /** Whether {@code a} lies in {@code p} (false for another family). */
    static boolean contains(IpPrefix p, InetAddress a) {
        byte[] net = p.address().getAddress();
        byte[] ip = a.getAddress();
        if (net.length != ip.length) {
            return false;
        }
        int bits = p.prefixLength();
        for (int i = 0; i < net.length && bits > 0; i++, bits -= 8) {
            int mask = bits >= 8 ? 0xff : (0xff << (8 - bits)) & 0xff;
            if ((net[i] & mask) != (ip[i] & mask)) {
                return false;
            }
        }
        return true;
    }

    /** Whether {@code inner} is a strictly smaller prefix inside {@code outer}. */
    static boolean strictlyInside(IpPrefix outer, IpPrefix inner) {
        return inner.prefixLength() > outer.prefixLength() && contains(outer, inner.address());
    }
}
