package org.jflannel.packet;

import java.nio.ByteBuffer;
import org.jflannel.core.Ip4Net;

/** Builds IPv4 packets for the tests, with a header checksum computed from scratch. */
public final class Packets {
    private Packets() {
    }

    /** A packet of {@code payload} bytes (0x00, 0x01, ... pattern) with a 20-byte header. */
    public static ByteBuffer ipv4(String src, String dst, int protocol, int ttl, int payload) {
        return ipv4(src, dst, protocol, ttl, payload, 0, 0);
    }

    public static ByteBuffer ipv4(String src, String dst, int protocol, int ttl, int payload, int fragmentWord, int id) {
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
    public static void sealHeader(ByteBuffer p) {
        p.putShort(10, (short) Ipv4.headerChecksumFromScratch(p));
    }

    /** True when the header verifies: the sum over it, checksum included, is all ones. */
    public static boolean headerVerifies(ByteBuffer p) {
        return Ipv4.internetChecksum(p, 0, Ipv4.headerLength(p)) == 0;
    }

    /** RFC 1071 one's complement sum over bytes, one 16-bit word at a time: independent of the code under test. */
    public static int onesSum(byte[] bytes) {
        long sum = 0;
        for (int i = 0; i < bytes.length; i += 2) {
            int hi = bytes[i] & 0xff;
            int lo = i + 1 < bytes.length ? bytes[i + 1] & 0xff : 0;
            sum += (hi << 8) | lo;
        }
        while ((sum >>> 16) != 0) {
            sum = (sum & 0xffff) + (sum >>> 16);
        }
        return (int) sum;
    }

    /** Pseudo-header (addresses, protocol 6, TCP length) followed by the TCP segment of the packet at [0, limit). */
    public static byte[] tcpWithPseudoHeader(ByteBuffer p) {
        int ihl = (p.get(0) & 0x0f) * 4;
        int tcpLength = p.limit() - ihl;
        byte[] b = new byte[12 + tcpLength];
        for (int i = 0; i < 8; i++) {
            b[i] = p.get(12 + i);
        }
        b[9] = 6;
        b[10] = (byte) (tcpLength >>> 8);
        b[11] = (byte) tcpLength;
        for (int i = 0; i < tcpLength; i++) {
            b[12 + i] = p.get(ihl + i);
        }
        return b;
    }

    /** The TCP checksum of the packet at [0, limit) is right (independent computation). */
    public static boolean tcpChecksumVerifies(ByteBuffer p) {
        return onesSum(tcpWithPseudoHeader(p)) == 0xffff;
    }

    /** Stores the right TCP checksum in the packet at [0, limit) (independent computation). */
    public static void sealTcp(ByteBuffer p) {
        int ihl = (p.get(0) & 0x0f) * 4;
        p.putShort(ihl + 16, (short) 0);
        p.putShort(ihl + 16, (short) ~onesSum(tcpWithPseudoHeader(p)));
    }

    /** Stores the right IP header checksum (independent computation). */
    public static void sealIp(ByteBuffer p) {
        int ihl = (p.get(0) & 0x0f) * 4;
        p.putShort(10, (short) 0);
        byte[] h = new byte[ihl];
        for (int i = 0; i < ihl; i++) {
            h[i] = p.get(i);
        }
        p.putShort(10, (short) ~onesSum(h));
    }

    /**
     * A TCP/IPv4 segment (DF, TTL 64, 12 bytes of options like a timestamp, window 501), payload
     * bytes {@code (seq + i) & 0xff} so that consecutive segments continue one pattern; both checksums sealed.
     */
    public static ByteBuffer tcp(String src, String dst, int sport, int dport, int seq, int id, int flags, int payload) {
        int total = 20 + 32 + payload;
        ByteBuffer p = ByteBuffer.allocateDirect(total);
        p.put(0, (byte) 0x45);
        p.putShort(2, (short) total);
        p.putShort(4, (short) id);
        p.putShort(6, (short) 0x4000);
        p.put(8, (byte) 64);
        p.put(9, (byte) 6);
        p.putInt(12, Ip4Net.parseAddress(src));
        p.putInt(16, Ip4Net.parseAddress(dst));
        p.putShort(20, (short) sport);
        p.putShort(22, (short) dport);
        p.putInt(24, seq);
        p.putInt(28, 77);
        p.put(32, (byte) (8 << 4));
        p.put(33, (byte) flags);
        p.putShort(34, (short) 501);
        p.put(40, (byte) 1);
        p.put(41, (byte) 1);
        p.put(42, (byte) 8);
        p.put(43, (byte) 10);
        p.putInt(44, 123456);
        p.putInt(48, 654321);
        for (int i = 0; i < payload; i++) {
            p.put(52 + i, (byte) (seq + i));
        }
        sealIp(p);
        sealTcp(p);
        return p;
    }
}
