package org.jflannel.backend.wireguard.protocol;

import java.net.Inet4Address;
import java.net.InetAddress;

/**
 * A peer's UDP address: the IP as the two 64-bit halves of an IPv6 address, an IPv4 one as
 * {@code ::ffff:a.b.c.d} (how a dual-stack socket reports IPv4 peers, so an endpoint configured from a
 * lease and one a datagram came from compare equal), and the port.
 */
public record Endpoint(long high, long low, int port) {
    private static final long MAPPED = 0xffffL << 32;

    public Endpoint {
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("endpoint port: expected 1..65535, got " + port);
        }
    }

    /** An IPv4 endpoint, the address as a 32-bit int. */
    public Endpoint(int address, int port) {
        this(0L, MAPPED | (address & 0xffffffffL), port);
    }

    public static Endpoint of(InetAddress a, int port) {
        byte[] b = a.getAddress();
        if (a instanceof Inet4Address) {
            return new Endpoint((b[0] & 0xff) << 24 | (b[1] & 0xff) << 16 | (b[2] & 0xff) << 8 | (b[3] & 0xff), port);
        }
        long hi = 0;
        long lo = 0;
        for (int i = 0; i < 8; i++) {
            hi = hi << 8 | (b[i] & 0xff);
            lo = lo << 8 | (b[i + 8] & 0xff);
        }
        return new Endpoint(hi, lo, port);
    }

    /** True for an IPv4 address ({@code ::ffff:0:0/96}). */
    public boolean ipv4() {
        return high == 0 && (low & 0xffffffff00000000L) == MAPPED;
    }

    /** The IPv4 address as a 32-bit int (meaningful when {@link #ipv4()}). */
    public int address() {
        return (int) low;
    }

    /** The bytes a cookie is bound to: the address (4 bytes for IPv4, 16 for IPv6) then the port, big-endian. */
    byte[] cookieSource() {
        int n = ipv4() ? 4 : 16;
        byte[] out = new byte[n + 2];
        for (int i = 0; i < n; i++) {
            int bit = (n - 1 - i) * 8;
            out[i] = (byte) (n == 4 ? low >>> bit : i < 8 ? high >>> (56 - i * 8) : low >>> (56 - (i - 8) * 8));
        }
        out[n] = (byte) (port >>> 8);
        out[n + 1] = (byte) port;
        return out;
    }

    @Override
    public String toString() {
        if (ipv4()) {
            int a = address();
            return (a >>> 24) + "." + ((a >>> 16) & 0xff) + "." + ((a >>> 8) & 0xff) + "." + (a & 0xff) + ":" + port;
        }
        return "[" + org.jflannel.core.Ip6Net.formatAddress(high, low) + "]:" + port;
    }
}
