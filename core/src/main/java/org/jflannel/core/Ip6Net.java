package org.jflannel.core;

import java.net.Inet6Address;
import java.net.UnknownHostException;

/**
 * An IPv6 network: address (host bits cleared) as two unsigned 64-bit halves, and prefix length.
 */
public record Ip6Net(long high, long low, int prefixLength) implements Comparable<Ip6Net> {

    public Ip6Net {
        if (prefixLength < 0 || prefixLength > 128) {
            throw new IllegalArgumentException("IPv6 prefix length must be 0..128, got " + prefixLength);
        }
        high &= maskHigh(prefixLength);
        low &= maskLow(prefixLength);
    }

    /** Parses {@code addr/n}; host bits are cleared ({@code fc00::1/64} gives {@code fc00::/64}). */
    public static Ip6Net parse(String cidr) {
        int slash = cidr.indexOf('/');
        if (slash < 0) {
            throw new IllegalArgumentException("invalid CIDR address: " + cidr);
        }
        int prefix = Ip4Net.parsePrefix(cidr.substring(slash + 1), 128, cidr);
        long[] a = parseAddress(cidr.substring(0, slash), cidr);
        return new Ip6Net(a[0], a[1], prefix);
    }

    /** Parses an IPv6 literal into {high, low}; never resolves names. */
    public static long[] parseAddress(String text) {
        byte[] b = Ip6Literal.parse(text);
        if (b == null) {
            throw new IllegalArgumentException("invalid IPv6 address: " + text);
        }
        return fromBytes(b);
    }

    private static long[] parseAddress(String text, String whole) {
        byte[] b = Ip6Literal.parse(text);
        if (b == null) {
            throw new IllegalArgumentException("invalid CIDR address: " + whole);
        }
        return fromBytes(b);
    }

    static long[] fromBytes(byte[] b) {
        long hi = 0;
        long lo = 0;
        for (int i = 0; i < 8; i++) {
            hi = (hi << 8) | (b[i] & 0xff);
            lo = (lo << 8) | (b[i + 8] & 0xff);
        }
        return new long[] {hi, lo};
    }

    public static Ip6Net of(Inet6Address address, int prefixLength) {
        long[] a = fromBytes(address.getAddress());
        return new Ip6Net(a[0], a[1], prefixLength);
    }

    static long maskHigh(int prefix) {
        return prefix == 0 ? 0 : prefix >= 64 ? -1L : -1L << (64 - prefix);
    }

    static long maskLow(int prefix) {
        return prefix <= 64 ? 0 : prefix == 128 ? -1L : -1L << (128 - prefix);
    }

    public static Inet6Address toInet(long high, long low) {
        byte[] b = new byte[16];
        for (int i = 0; i < 8; i++) {
            b[i] = (byte) (high >>> (56 - 8 * i));
            b[i + 8] = (byte) (low >>> (56 - 8 * i));
        }
        try {
            return Inet6Address.getByAddress(null, b, -1);
        } catch (UnknownHostException e) {
            throw new AssertionError(e); // sixteen bytes are always a valid address
        }
    }

    public Inet6Address inetAddress() {
        return toInet(high, low);
    }

    /** The network right after this one, of the same length. */
    public Ip6Net next() {
        long[] n = add(high, low, 0, 1, 128 - prefixLength);
        return new Ip6Net(n[0], n[1], prefixLength);
    }

    /** (high, low) + (addHigh, addLow) shifted left by {@code shift} bits, modulo 2^128. */
    private static long[] add(long high, long low, long addHigh, long addLow, int shift) {
        long sh;
        long sl;
        if (shift == 0) {
            sh = addHigh;
            sl = addLow;
        } else if (shift < 64) {
            sh = (addHigh << shift) | (addLow >>> (64 - shift));
            sl = addLow << shift;
        } else if (shift < 128) {
            sh = addLow << (shift - 64);
            sl = 0;
        } else {
            sh = 0;
            sl = 0;
        }
        long nl = low + sl;
        long carry = Long.compareUnsigned(nl, low) < 0 ? 1 : 0;
        return new long[] {high + sh + carry, nl};
    }

    public boolean contains(long ipHigh, long ipLow) {
        return (ipHigh & maskHigh(prefixLength)) == high && (ipLow & maskLow(prefixLength)) == low;
    }

    public boolean contains(Ip6Net other) {
        return other.prefixLength >= prefixLength && contains(other.high, other.low);
    }

    public boolean overlaps(Ip6Net other) {
        int s = Math.min(prefixLength, other.prefixLength);
        return (high & maskHigh(s)) == (other.high & maskHigh(s)) && (low & maskLow(s)) == (other.low & maskLow(s));
    }

    /** The {@code index}-th subnet of length {@code subnetLen} inside this network. */
    public Ip6Net subnet(int subnetLen, long index) {
        if (subnetLen < prefixLength || subnetLen > 128) {
            throw new IllegalArgumentException("subnet length " + subnetLen + " does not fit in " + this);
        }
        if (index < 0 || (subnetLen - prefixLength < 63 && index >= (1L << (subnetLen - prefixLength)))) {
            throw new IllegalArgumentException("subnet index " + index + " out of range in " + this);
        }
        long[] n = add(high, low, 0, index, 128 - subnetLen);
        return new Ip6Net(n[0], n[1], subnetLen);
    }

    /** Index of {@code subnet} among the subnets of its length inside this network (first 2^63 only). */
    public long indexOf(Ip6Net subnet) {
        if (!contains(subnet)) {
            throw new IllegalArgumentException(subnet + " is not inside " + this);
        }
        int shift = 128 - subnet.prefixLength;
        long dh = subnet.high - high;
        long dl = subnet.low - low;
        if (Long.compareUnsigned(subnet.low, low) < 0) {
            dh -= 1;
        }
        if (shift >= 64) {
            return dh >>> (shift - 64);
        }
        if (shift == 0) {
            return dl;
        }
        return (dl >>> shift) | (dh << (64 - shift));
    }

    @Override
    public int compareTo(Ip6Net o) {
        int c = Long.compareUnsigned(high, o.high);
        if (c == 0) {
            c = Long.compareUnsigned(low, o.low);
        }
        return c != 0 ? c : Integer.compare(prefixLength, o.prefixLength);
    }

    /**
     * Formats the address as Go's netip does (RFC 5952: lower case, longest zero run compressed;
     * an IPv4-mapped address as {@code ::ffff:a.b.c.d}).
     */
    public static String formatAddress(long high, long low) {
        return Ip6Literal.format(high, low);
    }

    @Override
    public String toString() {
        return formatAddress(high, low) + "/" + prefixLength;
    }
}
