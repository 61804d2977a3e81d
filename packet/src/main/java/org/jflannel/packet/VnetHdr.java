package org.jflannel.packet;

import java.nio.ByteBuffer;

/**
 * struct virtio_net_hdr, the 10 bytes before every packet on a TUN opened with IFF_VNET_HDR
 * (little-endian on x86, the only architecture we run on): flags, gso_type, hdr_len, gso_size,
 * csum_start, csum_offset. Offsets are relative to the start of the IP packet that follows.
 * Public for backend-wireguard, whose TUN has the same offloads.
 */
public final class VnetHdr {
    public static final int LENGTH = 10;
    public static final int F_NEEDS_CSUM = 1;
    /** On writes: the checksums are known good (the UDP checksum covered the whole inner packet). */
    public static final int F_DATA_VALID = 2;
    public static final int GSO_NONE = 0;
    public static final int GSO_TCPV4 = 1;
    /** VIRTIO_NET_HDR_GSO_TCPV6: a TSO6 super-packet (backend-wireguard offers TSO6 for IPv6 pods). */
    public static final int GSO_TCPV6 = 4;

    private VnetHdr() {
    }

    public static int flags(ByteBuffer b) {
        return b.get(0) & 0xff;
    }

    public static int gsoType(ByteBuffer b) {
        return b.get(1) & 0xff;
    }

    public static int gsoSize(ByteBuffer b) {
        return (b.get(4) & 0xff) | (b.get(5) & 0xff) << 8;
    }

    public static int csumStart(ByteBuffer b) {
        return (b.get(6) & 0xff) | (b.get(7) & 0xff) << 8;
    }

    public static int csumOffset(ByteBuffer b) {
        return (b.get(8) & 0xff) | (b.get(9) & 0xff) << 8;
    }

    /**
     * Writes a header for a GSO super-packet whose transport checksum is partial (NEEDS_CSUM):
     * {@code hdrLen} bytes of headers, {@code gsoSize} payload bytes per segment, the checksum
     * field at {@code csumStart + csumOffset}.
     */
    public static void writeGso(ByteBuffer b, int gsoType, int hdrLen, int gsoSize, int csumStart, int csumOffset) {
        b.put(0, (byte) F_NEEDS_CSUM);
        b.put(1, (byte) gsoType);
        putLe(b, 2, hdrLen);
        putLe(b, 4, gsoSize);
        putLe(b, 6, csumStart);
        putLe(b, 8, csumOffset);
    }

    private static void putLe(ByteBuffer b, int at, int v) {
        b.put(at, (byte) v);
        b.put(at + 1, (byte) (v >>> 8));
    }

    /** Writes a header for a plain packet whose checksums need no checking. */
    public static void writeDataValid(ByteBuffer b) {
        for (int i = 0; i < LENGTH; i++) {
            b.put(i, (byte) 0);
        }
        b.put(0, (byte) F_DATA_VALID);
    }
}
