package org.jflannel.netpol;

import org.jflannel.core.Ip4Net;
import org.jflannel.core.Ip6Net;

/** An IPv4 or IPv6 prefix (an ipBlock's {@code cidr} or {@code except}), host bits cleared. */
public record Cidr(Addr base, int prefixLength) {
    public Cidr {
        int max = base.family() == 4 ? 32 : 128;
        if (prefixLength < 0 || prefixLength > max) {
            throw new IllegalArgumentException("prefix length: expected 0.." + max + ", got " + prefixLength);
        }
        base = base.family() == 4
                ? new Addr(4, 0, Integer.toUnsignedLong(new Ip4Net((int) base.low(), prefixLength).address()))
                : masked6(base, prefixLength);
    }

    /** {@code a.b.c.d/n} or {@code addr6/n}; {@code field} names it in the error. */
    public static Cidr parse(String field, String text) {
        try {
            if (text.indexOf(':') >= 0) {
                Ip6Net n = Ip6Net.parse(text);
                return new Cidr(new Addr(6, n.high(), n.low()), n.prefixLength());
            }
            Ip4Net n = Ip4Net.parse(text);
            return new Cidr(new Addr(4, 0, Integer.toUnsignedLong(n.address())), n.prefixLength());
        } catch (RuntimeException e) {
            throw new IllegalArgumentException(field + ": not a CIDR: \"" + text + "\"", e);
        }
    }

    public int family() {
        return base.family();
    }

    public boolean contains(Addr a) {
        if (a.family() != base.family()) {
            return false;
        }
        if (a.family() == 4) {
            return new Ip4Net((int) base.low(), prefixLength).contains((int) a.low());
        }
        return new Ip6Net(base.high(), base.low(), prefixLength).contains(a.high(), a.low());
    }

    /** Whether every address of {@code other} is in this prefix. */
    public boolean contains(Cidr other) {
        return other.family() == family() && other.prefixLength >= prefixLength && contains(other.base);
    }

    private static Addr masked6(Addr a, int len) {
        Ip6Net n = new Ip6Net(a.high(), a.low(), len);
        return new Addr(6, n.high(), n.low());
    }

    @Override
    public String toString() {
        return base + "/" + prefixLength;
    }
}
