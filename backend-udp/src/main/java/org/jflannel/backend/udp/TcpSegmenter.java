package org.jflannel.backend.udp;

import java.nio.ByteBuffer;

/**
 * Cuts a TCP/IPv4 super-packet read from the TUN (TSO: one IP+TCP header, up to 64 KB of payload,
 * TCP checksum only partial) into {@code gsoSize}-payload segments, back to back in one buffer, as
 * the kernel's own GSO would: per segment IP total length, ID + i and header checksum; TCP
 * sequence + i·gsoSize, FIN and PSH only on the last, CWR only on the first, full checksum. All
 * segments but the last have the same length, which is what UDP GSO ({@code UDP_SEGMENT}) sends.
 * Also completes the partial checksum of a plain packet ({@code NEEDS_CSUM}).
 */
final class TcpSegmenter {
    static final int PROTO_TCP = 6;
    private static final int TCP_FIN = 0x01;
    private static final int TCP_PSH = 0x08;
    private static final int TCP_CWR = 0x80;

    private TcpSegmenter() {
    }

    /** Stores the checksum of [csumStart, limit) at csumStart + csumOffset (the field holds the pseudo-header sum). */
    static boolean completeChecksum(ByteBuffer p, int csumStart, int csumOffset) {
        int at = csumStart + csumOffset;
        if (csumStart >= p.limit() || at + 2 > p.limit()) {
            return false;
        }
        p.putShort(at, (short) Ipv4.internetChecksum(p, csumStart, p.limit() - csumStart));
        return true;
    }

    /**
     * Segments {@code p} (a valid TCP/IPv4 packet at [0, limit)) into {@code out} from index 0;
     * returns the length of one full segment (0 when {@code p} is no TCP packet to cut), out's limit
     * is the end of the last segment.
     */
    static int segment(ByteBuffer p, int gsoSize, ByteBuffer out) {
        int ihl = Ipv4.headerLength(p);
        if (Ipv4.protocol(p) != PROTO_TCP || gsoSize <= 0 || p.limit() < ihl + 20) {
            return 0;
        }
        int thl = ((p.get(ihl + 12) & 0xf0) >>> 4) * 4;
        int headers = ihl + thl;
        int payload = p.limit() - headers;
        if (thl < 20 || payload < 0 || headers + gsoSize > 0xffff) {
            return 0;
        }
        int segments = Math.max(1, (payload + gsoSize - 1) / gsoSize);
        if ((long) segments * headers + payload > out.capacity()) {
            return 0;
        }
        out.clear();
        int id = p.getShort(4) & 0xffff;
        int seq = p.getInt(ihl + 4);
        int flags = p.get(ihl + 13) & 0xff;
        int pos = 0;
        for (int i = 0; i < segments; i++) {
            int len = Math.min(gsoSize, payload - i * gsoSize);
            boolean last = i == segments - 1;
            copy(p, 0, out, pos, headers);
            copy(p, headers + i * gsoSize, out, pos + headers, len);
            out.putShort(pos + 2, (short) (headers + len));
            out.putShort(pos + 4, (short) (id + i));
            out.putInt(pos + ihl + 4, seq + i * gsoSize);
            int f = flags;
            if (!last) {
                f &= ~(TCP_FIN | TCP_PSH);
            }
            if (i > 0) {
                f &= ~TCP_CWR;
            }
            out.put(pos + ihl + 13, (byte) f);
            seal(out, pos, ihl, thl + len);
            pos += headers + len;
        }
        out.limit(pos);
        return headers + Math.min(gsoSize, payload);
    }

    /** IP header checksum and full TCP checksum (pseudo-header + segment) of the segment at {@code pos}. */
    private static void seal(ByteBuffer out, int pos, int ihl, int tcpLength) {
        out.putShort(pos + 10, (short) 0);
        out.putShort(pos + 10, (short) Ipv4.internetChecksum(out, pos, ihl));
        int tcp = pos + ihl;
        out.putShort(tcp + 16, (short) 0);
        long sum = pseudoHeaderSum(out, pos, tcpLength);
        sum += (~Ipv4.internetChecksum(out, tcp, tcpLength)) & 0xffff;
        while ((sum >>> 16) != 0) {
            sum = (sum & 0xffff) + (sum >>> 16);
        }
        out.putShort(tcp + 16, (short) ~sum);
    }

    static long pseudoHeaderSum(ByteBuffer b, int ip, int tcpLength) {
        return (b.getShort(ip + 12) & 0xffff) + (b.getShort(ip + 14) & 0xffff)
                + (b.getShort(ip + 16) & 0xffff) + (b.getShort(ip + 18) & 0xffff) + PROTO_TCP + tcpLength;
    }

    private static void copy(ByteBuffer from, int at, ByteBuffer to, int dst, int len) {
        to.put(dst, from, at, len);
    }
}
