package org.jflannel.packet;

import java.nio.ByteBuffer;
import org.jflannel.linuxnet.socket.IoVec;

/**
 * Cuts a TCP/IPv4 or TCP/IPv6 super-packet read from the TUN (TSO4, TSO6: one IP+TCP header, up to 64 KB of payload,
 * TCP checksum only partial) into {@code gsoSize}-payload segments (headers rebuilt in a side
 * buffer, payload left where it is, both handed to the socket as iovec pieces), as
 * the kernel's own GSO would: per segment IP total length, ID + i and header checksum (IPv6: payload
 * length only); TCP
 * sequence + i·gsoSize, FIN and PSH only on the last, CWR only on the first, full checksum. All
 * segments but the last have the same length, which is what UDP GSO ({@code UDP_SEGMENT}) sends.
 * Also completes the partial checksum of a plain packet ({@code NEEDS_CSUM}). Public for
 * backend-wireguard, which seals each segment it plans.
 */
public final class TcpSegmenter {
    static final int PROTO_TCP = 6;
    private static final int IPV6_HEADER = 40;
    /** Room per segment's headers in the header buffer: IP and TCP headers of at most 60 bytes each. */
    public static final int HEADER_SLOT = 128;
    /** A 64 KB super-packet cut into the smallest MSS IPv4 allows (536) makes 123 segments. */
    public static final int MAX_SEGMENTS = 128;
    private static final int TCP_FIN = 0x01;
    private static final int TCP_PSH = 0x08;
    private static final int TCP_CWR = 0x80;

    private TcpSegmenter() {
    }

    /** Stores the checksum of [csumStart, limit) at csumStart + csumOffset (the field holds the pseudo-header sum). */
    public static boolean completeChecksum(ByteBuffer p, int csumStart, int csumOffset) {
        int at = csumStart + csumOffset;
        if (csumStart >= p.limit() || at + 2 > p.limit()) {
            return false;
        }
        p.putShort(at, (short) Ipv4.internetChecksum(p, csumStart, p.limit() - csumStart));
        return true;
    }

    /**
     * Plans the segments of {@code p} (a valid TCP/IPv4 packet at [0, limit)) with {@code gsoSize}
     * payload bytes each, without copying the payload: segment {@code i}'s headers are copied to
     * {@code hdrs} at {@code i * HEADER_SLOT} and fixed up, and {@code iov} gets two pieces per
     * segment, those headers and the segment's payload inside {@code p}. Returns the length of one
     * full segment (0 when {@code p} is no TCP packet to cut, or would make more than
     * {@link #MAX_SEGMENTS} segments).
     */
    public static int plan(ByteBuffer p, int gsoSize, ByteBuffer hdrs, IoVec iov, Checksum checksum) {
        if (p.limit() > 0 && (p.get(0) & 0xf0) == 0x60) {
            return planV6(p, gsoSize, hdrs, iov, checksum);
        }
        int ihl = Ipv4.headerLength(p);
        if (Ipv4.protocol(p) != PROTO_TCP || gsoSize <= 0 || p.limit() < ihl + 20) {
            return 0;
        }
        int thl = ((p.get(ihl + 12) & 0xf0) >>> 4) * 4;
        int headers = ihl + thl;
        int payload = p.limit() - headers;
        if (thl < 20 || payload < 0 || headers + gsoSize > 0xffff || headers > HEADER_SLOT) {
            return 0;
        }
        int segments = Math.max(1, (payload + gsoSize - 1) / gsoSize);
        if (segments > MAX_SEGMENTS || 2 * segments > iov.capacity() || segments * HEADER_SLOT > hdrs.capacity()) {
            return 0;
        }
        iov.clear();
        int id = p.getShort(4) & 0xffff;
        int seq = p.getInt(ihl + 4);
        int flags = p.get(ihl + 13) & 0xff;
        for (int i = 0; i < segments; i++) {
            int len = Math.min(gsoSize, payload - i * gsoSize);
            int pos = i * HEADER_SLOT;
            int data = headers + i * gsoSize;
            hdrs.put(pos, p, 0, headers);
            hdrs.putShort(pos + 2, (short) (headers + len));
            hdrs.putShort(pos + 4, (short) (id + i));
            hdrs.putInt(pos + ihl + 4, seq + i * gsoSize);
            int f = flags;
            if (i != segments - 1) {
                f &= ~(TCP_FIN | TCP_PSH);
            }
            if (i > 0) {
                f &= ~TCP_CWR;
            }
            hdrs.put(pos + ihl + 13, (byte) f);
            hdrs.putShort(pos + 10, (short) 0);
            hdrs.putShort(pos + 10, (short) Ipv4.internetChecksum(hdrs, pos, ihl));
            int tcp = pos + ihl;
            hdrs.putShort(tcp + 16, (short) 0);
            long sum = pseudoHeaderSum(hdrs, pos, thl + len) + Ipv4.sum(hdrs, tcp, thl) + checksum.sum(p, data, len);
            while ((sum >>> 16) != 0) {
                sum = (sum & 0xffff) + (sum >>> 16);
            }
            hdrs.putShort(tcp + 16, (short) ~sum);
            iov.add(hdrs, pos, headers).add(p, data, len);
        }
        return headers + Math.min(gsoSize, payload);
    }

    /**
     * {@link #plan} for TCP/IPv6 (TSO6): the 40-byte header followed directly by TCP (a packet with
     * extension headers is not cut: 0); per segment the payload length, sequence, flags and the full
     * checksum over the IPv6 pseudo-header; IPv6 has no ID and no header checksum.
     */
    static int planV6(ByteBuffer p, int gsoSize, ByteBuffer hdrs, IoVec iov, Checksum checksum) {
        if (p.limit() < IPV6_HEADER + 20 || (p.get(6) & 0xff) != PROTO_TCP || gsoSize <= 0) {
            return 0;
        }
        int thl = ((p.get(IPV6_HEADER + 12) & 0xf0) >>> 4) * 4;
        int headers = IPV6_HEADER + thl;
        int payload = p.limit() - headers;
        if (thl < 20 || payload < 0 || thl + gsoSize > 0xffff || headers > HEADER_SLOT) {
            return 0;
        }
        int segments = Math.max(1, (payload + gsoSize - 1) / gsoSize);
        if (segments > MAX_SEGMENTS || 2 * segments > iov.capacity() || segments * HEADER_SLOT > hdrs.capacity()) {
            return 0;
        }
        iov.clear();
        int seq = p.getInt(IPV6_HEADER + 4);
        int flags = p.get(IPV6_HEADER + 13) & 0xff;
        long addresses = Ipv4.sum(p, 8, 32); // source and destination, the same in every segment
        for (int i = 0; i < segments; i++) {
            int len = Math.min(gsoSize, payload - i * gsoSize);
            int pos = i * HEADER_SLOT;
            int data = headers + i * gsoSize;
            hdrs.put(pos, p, 0, headers);
            hdrs.putShort(pos + 4, (short) (thl + len));
            hdrs.putInt(pos + IPV6_HEADER + 4, seq + i * gsoSize);
            int f = flags;
            if (i != segments - 1) {
                f &= ~(TCP_FIN | TCP_PSH);
            }
            if (i > 0) {
                f &= ~TCP_CWR;
            }
            hdrs.put(pos + IPV6_HEADER + 13, (byte) f);
            int tcp = pos + IPV6_HEADER;
            hdrs.putShort(tcp + 16, (short) 0);
            // RFC 8200 8.1: addresses, the upper-layer length (32 bits), next header
            long sum = addresses + (thl + len) + PROTO_TCP + Ipv4.sum(hdrs, tcp, thl) + checksum.sum(p, data, len);
            while ((sum >>> 16) != 0) {
                sum = (sum & 0xffff) + (sum >>> 16);
            }
            hdrs.putShort(tcp + 16, (short) ~sum);
            iov.add(hdrs, pos, headers).add(p, data, len);
        }
        return headers + Math.min(gsoSize, payload);
    }

    /** IP and TCP headers of a TCP/IPv4 or TCP/IPv6 packet (as {@link #plan} reads them). */
    public static int headerLength(ByteBuffer p) {
        int ip = (p.get(0) & 0xf0) == 0x60 ? IPV6_HEADER : Ipv4.headerLength(p);
        return ip + ((p.get(ip + 12) & 0xf0) >>> 4) * 4;
    }

    static long pseudoHeaderSum(ByteBuffer b, int ip, int tcpLength) {
        return (b.getShort(ip + 12) & 0xffff) + (b.getShort(ip + 14) & 0xffff)
                + (b.getShort(ip + 16) & 0xffff) + (b.getShort(ip + 18) & 0xffff) + PROTO_TCP + tcpLength;
    }

}
