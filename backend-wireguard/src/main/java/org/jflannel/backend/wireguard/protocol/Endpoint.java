package org.jflannel.backend.wireguard.protocol;

/** A peer's UDP address (IPv4 as a 32-bit int, port). */
public record Endpoint(int address, int port) {
    public Endpoint {
        if (port < 1 || port > 65535) {
            throw new IllegalArgumentException("endpoint port: expected 1..65535, got " + port);
        }
    }

    public static Endpoint of(java.net.Inet4Address a, int port) {
        byte[] b = a.getAddress();
        return new Endpoint((b[0] & 0xff) << 24 | (b[1] & 0xff) << 16 | (b[2] & 0xff) << 8 | (b[3] & 0xff), port);
    }

    /** The bytes a cookie is bound to: address then port, big-endian. */
    byte[] cookieSource() {
        return new byte[] {(byte) (address >>> 24), (byte) (address >>> 16), (byte) (address >>> 8), (byte) address,
            (byte) (port >>> 8), (byte) port};
    }

    @Override
    public String toString() {
        return (address >>> 24) + "." + ((address >>> 16) & 0xff) + "." + ((address >>> 8) & 0xff) + "." + (address & 0xff) + ":" + port;
    }
}
