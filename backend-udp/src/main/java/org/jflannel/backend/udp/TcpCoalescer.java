package org.jflannel.backend.udp;

import java.nio.ByteBuffer;

/**
 * GRO in the daemon: consecutive full-size segments of one TCP flow, as they arrive from a peer,
 * are merged into one super-packet written to the TUN with a GSO virtio_net_hdr, so the kernel
 * handles one 64 KB packet instead of ~45 (and we make one write). Like the kernel's GRO, only
 * plain data segments merge (flags ACK/PSH, no IP options or fragments, identical headers except
 * sequence number and checksums, contiguous sequence numbers, every segment but the last of the
 * same size), and only segments whose TCP checksum verifies: the merged packet goes up with its
 * checksum marked partial, so this is where corruption would otherwise slip through.
 */
final class TcpCoalescer {
    static final int MAX_SEGMENTS = 64;
    private static final int ACK = 0x10;
    private static final int PSH = 0x08;

    /** [virtio_net_hdr][merged packet]. */
    private final ByteBuffer raw = ByteBuffer.allocateDirect(VnetHdr.LENGTH + TunWriter.MAX_PACKET);
    private final ByteBuffer merged = raw.slice(VnetHdr.LENGTH, TunWriter.MAX_PACKET);
    private int segments;
    private int headers;
    private int segmentPayload;
    private int nextSeq;
    private boolean closed;

    boolean pending() {
        return segments > 0;
    }

    /**
     * Appends {@code p} (a valid IPv4 packet at [0, limit)) to the pending super-packet or starts
     * one; false when it can do neither (the caller writes the pending one, then {@code p} alone).
     */
    boolean offer(ByteBuffer p) {
        if (!mergeable(p)) {
            return false;
        }
        int ihl = Ipv4.headerLength(p);
        int hl = ihl + tcpHeaderLength(p, ihl);
        int payload = p.limit() - hl;
        if (segments > 0 && !continues(p, hl, payload)) {
            return false;
        }
        if (segments == 0) {
            merged.clear();
            merged.put(0, p, 0, p.limit());
            merged.limit(p.limit());
            headers = hl;
            segmentPayload = payload;
            closed = false;
        } else {
            int end = merged.limit();
            merged.limit(end + payload);
            merged.put(end, p, hl, payload);
            merged.put(ihl + 13, (byte) (merged.get(ihl + 13) | p.get(ihl + 13)));
            closed = payload < segmentPayload;
        }
        closed |= (p.get(ihl + 13) & PSH) != 0;
        nextSeq = p.getInt(ihl + 4) + payload;
        segments++;
        return true;
    }

    /**
     * The pending packet ready to write, [virtio_net_hdr][packet]: a lone segment as it came, several
     * as one GSO packet with fixed-up lengths and a partial TCP checksum. Clears the pending state.
     */
    ByteBuffer take() {
        int len = merged.limit();
        for (int i = 0; i < VnetHdr.LENGTH; i++) {
            raw.put(i, (byte) 0);
        }
        if (segments > 1) {
            int ihl = Ipv4.headerLength(merged);
            merged.putShort(2, (short) len);
            merged.putShort(10, (short) 0);
            merged.putShort(10, (short) Ipv4.internetChecksum(merged, 0, ihl));
            long sum = TcpSegmenter.pseudoHeaderSum(merged, 0, len - ihl);
            while ((sum >>> 16) != 0) {
                sum = (sum & 0xffff) + (sum >>> 16);
            }
            merged.putShort(ihl + 16, (short) sum);
            raw.put(0, (byte) VnetHdr.F_NEEDS_CSUM);
            raw.put(1, (byte) VnetHdr.GSO_TCPV4);
            putLe(2, headers);
            putLe(4, segmentPayload);
            putLe(6, ihl);
            putLe(8, 16);
        }
        segments = 0;
        raw.clear().limit(VnetHdr.LENGTH + len);
        return raw;
    }

    private boolean mergeable(ByteBuffer p) {
        int ihl = Ipv4.headerLength(p);
        if (ihl != Ipv4.MIN_HEADER || Ipv4.protocol(p) != TcpSegmenter.PROTO_TCP || (p.getShort(6) & 0x3fff) != 0
                || p.limit() < ihl + 20) {
            return false;
        }
        int thl = tcpHeaderLength(p, ihl);
        int flags = p.get(ihl + 13) & 0xff;
        return thl >= 20 && p.limit() > ihl + thl && (flags & ~(ACK | PSH)) == 0 && (flags & ACK) != 0
                && tcpChecksumVerifies(p, ihl);
    }

    private boolean continues(ByteBuffer p, int hl, int payload) {
        int ihl = Ipv4.headerLength(p);
        if (closed || segments >= MAX_SEGMENTS || hl != headers || payload > segmentPayload
                || merged.limit() + payload > TunWriter.MAX_PACKET || p.getInt(ihl + 4) != nextSeq) {
            return false;
        }
        // IP: version..TOS, flags, TTL, protocol, addresses; TCP: ports, ack, data offset, window, urgent, options
        return sameBytes(p, 0, 2) && sameBytes(p, 6, 4) && sameBytes(p, 12, 8)
                && sameBytes(p, ihl, 4) && sameBytes(p, ihl + 8, 5) && sameBytes(p, ihl + 14, 2)
                && sameBytes(p, ihl + 18, hl - ihl - 18);
    }

    private boolean sameBytes(ByteBuffer p, int from, int len) {
        for (int i = from; i < from + len; i++) {
            if (p.get(i) != merged.get(i)) {
                return false;
            }
        }
        return true;
    }

    private static int tcpHeaderLength(ByteBuffer p, int ihl) {
        return ((p.get(ihl + 12) & 0xf0) >>> 4) * 4;
    }

    private static boolean tcpChecksumVerifies(ByteBuffer p, int ihl) {
        int tcpLength = p.limit() - ihl;
        long sum = TcpSegmenter.pseudoHeaderSum(p, 0, tcpLength) + ((~Ipv4.internetChecksum(p, ihl, tcpLength)) & 0xffff);
        while ((sum >>> 16) != 0) {
            sum = (sum & 0xffff) + (sum >>> 16);
        }
        return sum == 0xffff;
    }

    private void putLe(int at, int v) {
        raw.put(at, (byte) v);
        raw.put(at + 1, (byte) (v >>> 8));
    }
}
