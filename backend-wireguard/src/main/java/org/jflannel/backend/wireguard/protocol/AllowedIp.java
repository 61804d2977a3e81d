package org.jflannel.backend.wireguard.protocol;

/**
 * A prefix a peer may send from and is sent to (cryptokey routing): IPv4 (the address in the low 32
 * bits of {@code low}) or IPv6 (two 64-bit halves), host bits cleared.
 */
public record AllowedIp(boolean ipv6, long high, long low, int prefixLength) {
    public AllowedIp {
        int max = ipv6 ? 128 : 32;
        if (prefixLength < 0 || prefixLength > max) {
            throw new IllegalArgumentException("allowed ip prefix: expected 0.." + max + ", got " + prefixLength);
        }
        if (ipv6) {
            high &= highMask(prefixLength);
            low &= lowMask(prefixLength);
        } else {
            high = 0;
            low = (low & mask(prefixLength)) & 0xffffffffL;
        }
    }

    /** An IPv4 prefix, the address as a 32-bit int. */
    public AllowedIp(int address, int prefixLength) {
        this(false, 0, address & 0xffffffffL, prefixLength);
    }

    /** An IPv6 prefix. */
    public static AllowedIp v6(long high, long low, int prefixLength) {
        return new AllowedIp(true, high, low, prefixLength);
    }

    static int mask(int prefixLength) {
        return prefixLength == 0 ? 0 : -1 << (32 - prefixLength);
    }

    /** An IPv6 prefix's mask over the address's high 64 bits. */
    static long highMask(int prefixLength) {
        return prefixLength == 0 ? 0 : -1L << (64 - Math.min(64, prefixLength));
    }

    /** An IPv6 prefix's mask over the address's low 64 bits. */
    static long lowMask(int prefixLength) {
        return prefixLength <= 64 ? 0 : -1L << (128 - prefixLength);
    }

    /** The IPv4 address as a 32-bit int (meaningful when not {@link #ipv6()}). */
    public int address() {
        return (int) low;
    }

    /** True when this IPv4 prefix holds {@code ip}. */
    public boolean contains(int ip) {
        return !ipv6 && (ip & mask(prefixLength)) == (int) low;
    }

    /** True when this IPv6 prefix holds {@code ipHigh:ipLow}. */
    public boolean contains(long ipHigh, long ipLow) {
        if (!ipv6) {
            return false;
        }
        return (ipHigh & highMask(prefixLength)) == high && (ipLow & lowMask(prefixLength)) == low;
    }

    @Override
    public String toString() {
        String a = ipv6 ? new Endpoint(high, low, 1).toString() : new Endpoint((int) low, 1).toString();
        return (ipv6 ? a.substring(1, a.length() - 3) : a.substring(0, a.length() - 2)) + "/" + prefixLength;
    }
}
