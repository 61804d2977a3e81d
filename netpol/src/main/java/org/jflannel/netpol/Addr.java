package org.jflannel.netpol;

import org.jflannel.core.Ip4Net;
import org.jflannel.core.Ip6Net;

/**
 * One IPv4 or IPv6 address, comparable and cheap to hash: {@code family} 4 or 6; IPv4 in {@code low}'s low
 * 32 bits (unsigned), {@code high} 0; IPv6 as its two 64-bit halves.
 */
public record Addr(int family, long high, long low) implements Comparable<Addr> {
    public Addr {
        if (family != 4 && family != 6) {
            throw new IllegalArgumentException("address family: expected 4 or 6, got " + family);
        }
        if (family == 4 && (high != 0 || (low >>> 32) != 0)) {
            throw new IllegalArgumentException("IPv4 address out of range");
        }
    }

    /** An IPv4 or IPv6 literal (never a name). */
    public static Addr parse(String text) {
        if (text.indexOf(':') >= 0) {
            long[] a = Ip6Net.parseAddress(text);
            return new Addr(6, a[0], a[1]);
        }
        return new Addr(4, 0, Integer.toUnsignedLong(Ip4Net.parseAddress(text)));
    }

    @Override
    public int compareTo(Addr o) {
        int c = Integer.compare(family, o.family);
        if (c == 0) {
            c = Long.compareUnsigned(high, o.high);
        }
        return c != 0 ? c : Long.compareUnsigned(low, o.low);
    }

    @Override
    public String toString() {
        return family == 4 ? Ip4Net.formatAddress((int) low) : Ip6Net.formatAddress(high, low);
    }
}
