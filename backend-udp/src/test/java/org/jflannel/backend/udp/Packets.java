package org.jflannel.backend.udp;

import java.nio.ByteBuffer;
import org.jflannel.core.Ip4Net;

/** Builds IPv4 packets for the tests, with a header checksum computed from scratch. */
final class Packets {
    private Packets() {
    }

    /** A packet of {@code payload} bytes (0x00, 0x01, ... pattern) with a 20-byte header. */
    static ByteBuffer ipv4(String src, String dst, int protocol, int ttl, int payload) {
        return ipv4(src, dst, protocol, ttl, payload, 0, 0);
    }

    static ByteBuffer ipv4(String src, String dst, int protocol, int ttl, int payload, int fragmentWord, int id) {
        int total = 20 + payload;
        ByteBuffer p = ByteBuffer.allocateDirect(total);
        p.put(0, (byte) 0x45);
        p.putShort(2, (short) total);
        p.putShort(4, (short) id);
        p.putShort(6, (short) fragmentWord);
        p.put(8, (byte) ttl);
        p.put(9, (byte) protocol);
        p.putInt(12, Ip4Net.parseAddress(src));
        p.putInt(16, Ip4Net.parseAddress(dst));
        for (int i = 0; i < payload; i++) {
            p.put(20 + i, (byte) i);
        }
        sealHeader(p);
        return p;
    }

    /** Writes the header checksum computed from scratch. */
    static void sealHeader(ByteBuffer p) {
        p.putShort(10, (short) Ipv4.headerChecksumFromScratch(p));
    }

    /** True when the header verifies: the sum over it, checksum included, is all ones. */
    static boolean headerVerifies(ByteBuffer p) {
        return Ipv4.internetChecksum(p, 0, Ipv4.headerLength(p)) == 0;
    }
}
