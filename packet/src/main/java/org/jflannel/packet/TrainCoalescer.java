package org.jflannel.packet;

import java.nio.ByteBuffer;
import org.jflannel.linuxnet.socket.IoVec;

/**
 * GRO in the daemon, on the packets of one receive batch (UDP GRO trains or recvmmsg slots): the
 * consecutive segments of a TCP flow become one virtio-net super-packet, written to the TUN with a
 * single header rewrite (the first segment's headers, lengths and checksums fixed) and the other
 * segments' payloads gathered behind it by iovec, never copied. The kernel's rules
 * ({@code inet_gro_receive}, {@code tcp_gro_receive}) decide what merges:
 * <ul>
 *   <li>IPv4 without options or fragments, same addresses, TOS, TTL and DF; IP ids incrementing by one
 *       (or all equal with DF);</li>
 *   <li>TCP: same ports, ack, header length, window, urgent pointer and options; flags ACK (and PSH);
 *       each sequence number the previous one's end; an intact segment (the merged packet goes up
 *       with its checksum marked partial, so nobody checks it after us; see below);</li>
 *   <li>every payload the size of the first but the last; a shorter one or a PSH closes the packet;
 *       at most {@link #MAX_SEGMENTS} segments and 65,535 bytes.</li>
 * </ul>
 * IPv6 merges by the same TCP rules when TCP follows the fixed header, the first word (traffic class,
 * flow label), hop limit and addresses equal ({@code ipv6_gro_receive}; no IP id), written as GSO_TCPV6.
 * Anything else (a hole, a reordered segment, a pure ACK, UDP, an IP option, a bad checksum) is
 * written as it came, after what its flow has pending, so each flow keeps its order. Up to
 * {@link #MAX_FLOWS} flows are merged at once (several pods' streams share the peers' one UDP
 * 4-tuple). Everything pending is written at {@link #flush()}: the end of the batch, before its
 * buffer is reused. Not thread-safe: one per receiving thread. Public for backend-wireguard, whose
 * receiving thread merges what it decrypts the same way.
 *
 * <p>Integrity: every datagram handed to us passed the kernel's check of its outer UDP checksum,
 * which covers the whole inner packet (udp_recvmsg drops a bad one, UDP GRO only aggregates
 * verified ones), and its inner TCP checksum was complete when the peer sent it (upstream's
 * kernel wrote it, or our {@link TcpSegmenter} did). So by default a segment is merged without
 * summing its payload again: that pass was the largest Java cost of the receiving thread. The
 * gap: a peer that sends with the UDP checksum off (zero, legal in IPv4; neither upstream flannel
 * nor this daemon does) gets no end-to-end check of what we merge. {@code verifyChecksums} (the
 * {@code JFLANNEL_UDP_VERIFY_CSUM} switch) restores the kernel GRO's own rule: a segment whose
 * checksum does not verify is not merged but written alone, for the stack to check and drop.
 */
public final class TrainCoalescer {
    static final int MAX_SEGMENTS = 64;
    static final int MAX_FLOWS = 8;
    static final int MAX_PACKET = 65535;
    private static final int TCP = 6;
    private static final int PSH = 0x08;
    private static final int ACK = 0x10;
    private static final int DF = 0x4000;
    private static final int IPV6_HEADER = 40;

    /** Where packets go: one packet per call, as iovec pieces ([virtio_net_hdr] + IP packet). */
    public interface Sink {
        void write(IoVec packet);
    }

    private final boolean vnetHdr;
    private final boolean merge;
    private final boolean verify;
    private final Sink sink;
    private final IoVec iov = new IoVec(MAX_SEGMENTS + 2);
    private final Checksum checksum = new Checksum();
    private final ByteBuffer plainHdr = ByteBuffer.allocateDirect(VnetHdr.LENGTH);
    private final ByteBuffer gsoHdr = ByteBuffer.allocateDirect(VnetHdr.LENGTH);

    // the open flows, oldest first; per flow the head packet and the payload pieces that follow it
    private int open;
    private final ByteBuffer[] buf = new ByteBuffer[MAX_FLOWS];
    private final int[] head = new int[MAX_FLOWS];
    private final int[] headers = new int[MAX_FLOWS];
    private final int[] mss = new int[MAX_FLOWS];
    private final int[] total = new int[MAX_FLOWS];
    private final int[] nextSeq = new int[MAX_FLOWS];
    private final int[] lastId = new int[MAX_FLOWS];
    private final int[] segments = new int[MAX_FLOWS];
    private final boolean[] closed = new boolean[MAX_FLOWS];
    private final boolean[] pushed = new boolean[MAX_FLOWS];
    private final int[][] pieceAt = new int[MAX_FLOWS][MAX_SEGMENTS];
    private final int[][] pieceLen = new int[MAX_FLOWS][MAX_SEGMENTS];
    private long merged;
    private long written;

    /**
     * @param vnetHdr the TUN takes a virtio_net_hdr before each packet
     * @param merge   merge segments (needs {@code vnetHdr}); false: every packet is written alone
     * @param verify  sum each segment's payload and merge only those whose TCP checksum verifies
     */
    public TrainCoalescer(boolean vnetHdr, boolean merge, boolean verify, Sink sink) {
        this.vnetHdr = vnetHdr;
        this.merge = merge && vnetHdr;
        this.verify = verify;
        this.sink = sink;
    }

    /** A checked inbound IPv4 or IPv6 packet at {@code [at, at + len)} of {@code b} ({@code len} its total length). */
    public void offer(ByteBuffer b, int at, int len) {
        int version = b.get(at) & 0xf0;
        if (!merge || (version != 0x40 && version != 0x60)) {
            // neither IPv4 nor IPv6: no parse of its header; it belongs to no flow pending, so their order is kept
            writeAlone(b, at, len);
            return;
        }
        boolean v6 = version == 0x60;
        int ihl = v6 ? IPV6_HEADER : Ipv4.headerLength(b, at);
        // IPv6: TCP right after the fixed header (extension headers are written alone)
        boolean tcp = v6 ? (b.get(at + 6) & 0xff) == TCP && len >= ihl + 20
                : Ipv4.protocol(b, at) == TCP && len >= ihl + 20 && Ipv4.firstFragment(b, at);
        int flow = tcp ? find(b, at, ihl) : -1;
        if (!tcp || !mergeable(b, at, len, ihl)) {
            if (flow >= 0) {
                flush(flow);
            }
            writeAlone(b, at, len);
            return;
        }
        if (flow >= 0) {
            if (continues(flow, b, at, len, ihl)) {
                append(flow, b, at, len, ihl);
                return;
            }
            flush(flow);
        }
        if (open == MAX_FLOWS) {
            flush(0);
        }
        start(b, at, len, ihl);
    }

    /** Writes everything pending (end of a batch: the buffers are about to be reused). */
    public void flush() {
        while (open > 0) {
            flush(open - 1);
        }
    }

    /** Segments that went into a merged packet, and packets written (merged or not), since start. */
    public long mergedSegments() {
        return merged;
    }

    public long packetsWritten() {
        return written;
    }

    private int find(ByteBuffer b, int at, int ihl) {
        boolean v6 = isV6(b, at);
        int ports = b.getInt(at + ihl);
        for (int f = 0; f < open; f++) {
            int h = head[f];
            ByteBuffer hb = buf[f];
            if (isV6(hb, h) != v6) {
                continue;
            }
            boolean same = v6 ? hb.getInt(h + IPV6_HEADER) == ports && same(hb, h + 8, b, at + 8, 32)
                    : hb.getInt(h + 12) == Ipv4.source(b, at) && hb.getInt(h + 16) == Ipv4.destination(b, at)
                    && hb.getInt(h + 20) == ports;
            if (same) {
                return f;
            }
        }
        return -1;
    }

    private static boolean isV6(ByteBuffer b, int at) {
        return (b.get(at) & 0xf0) == 0x60;
    }

    /** Could start or join a merged packet: plain IPv4 header, a data segment with ACK (PSH), (verifying) a good checksum. */
    private boolean mergeable(ByteBuffer b, int at, int len, int ihl) {
        if (!isV6(b, at) && (ihl != Ipv4.MIN_HEADER || (b.getShort(at + 6) & 0x3fff) != 0)) {
            return false;
        }
        int thl = tcpHeaderLength(b, at + ihl);
        int flags = b.get(at + ihl + 13) & 0xff;
        return thl >= 20 && len > ihl + thl && (flags & ~(ACK | PSH)) == 0 && (flags & ACK) != 0
                && (!verify || checksumVerifies(b, at, ihl, len, checksum));
    }

    private boolean continues(int f, ByteBuffer b, int at, int len, int ihl) {
        ByteBuffer hb = buf[f];
        int h = head[f];
        int hl = ihl + tcpHeaderLength(b, at + ihl);
        int payload = len - hl;
        if (closed[f] || hb != b || segments[f] >= MAX_SEGMENTS || hl != headers[f] || payload > mss[f]
                || total[f] + payload > MAX_PACKET || b.getInt(at + ihl + 4) != nextSeq[f]) {
            return false;
        }
        boolean ipOk;
        if (isV6(b, at)) {
            // IPv6 (ipv6_gro_receive): version, traffic class, flow label; next header, hop limit; addresses
            ipOk = same(hb, h, b, at, 4) && same(hb, h + 6, b, at + 6, 34);
        } else {
            int id = b.getShort(at + 4) & 0xffff;
            boolean idOk = id == ((lastId[f] + 1) & 0xffff) || ((b.getShort(at + 6) & DF) != 0 && id == lastId[f]);
            // IP: version/IHL, TOS; flags/fragment; TTL, protocol; addresses
            ipOk = idOk && same(hb, h, b, at, 2) && same(hb, h + 6, b, at + 6, 4) && same(hb, h + 12, b, at + 12, 8);
        }
        // TCP: ports; ack; data offset; window, urgent pointer and options (flags are checked in mergeable: ACK, maybe PSH)
        return ipOk && same(hb, h + ihl, b, at + ihl, 4) && same(hb, h + ihl + 8, b, at + ihl + 8, 5)
                && same(hb, h + ihl + 14, b, at + ihl + 14, 2) && same(hb, h + ihl + 18, b, at + ihl + 18, hl - ihl - 18);
    }

    private void start(ByteBuffer b, int at, int len, int ihl) {
        int f = open++;
        int hl = ihl + tcpHeaderLength(b, at + ihl);
        int payload = len - hl;
        buf[f] = b;
        head[f] = at;
        headers[f] = hl;
        mss[f] = payload;
        total[f] = len;
        nextSeq[f] = b.getInt(at + ihl + 4) + payload;
        lastId[f] = b.getShort(at + 4) & 0xffff;
        segments[f] = 1;
        pushed[f] = (b.get(at + ihl + 13) & PSH) != 0;
        closed[f] = pushed[f];
        if (closed[f]) {
            flush(f);
        }
    }

    private void append(int f, ByteBuffer b, int at, int len, int ihl) {
        int hl = headers[f];
        int payload = len - hl;
        int n = segments[f] - 1;
        pieceAt[f][n] = at + hl;
        pieceLen[f][n] = payload;
        segments[f]++;
        total[f] += payload;
        nextSeq[f] += payload;
        lastId[f] = b.getShort(at + 4) & 0xffff;
        pushed[f] |= (b.get(at + ihl + 13) & PSH) != 0;
        // as the kernel: a short segment or a PSH ends the packet
        if (payload < mss[f] || pushed[f]) {
            flush(f);
        }
    }

    /** Writes flow {@code f} (merged when it holds more than one segment) and closes the gap in the arrays. */
    private void flush(int f) {
        ByteBuffer b = buf[f];
        int h = head[f];
        if (segments[f] == 1) {
            writeAlone(b, h, total[f]);
        } else {
            writeMerged(f, b, h);
        }
        for (int i = f + 1; i < open; i++) {
            int j = i - 1;
            buf[j] = buf[i];
            head[j] = head[i];
            headers[j] = headers[i];
            mss[j] = mss[i];
            total[j] = total[i];
            nextSeq[j] = nextSeq[i];
            lastId[j] = lastId[i];
            segments[j] = segments[i];
            closed[j] = closed[i];
            pushed[j] = pushed[i];
            int[] a = pieceAt[j];
            pieceAt[j] = pieceAt[i];
            pieceAt[i] = a;
            int[] l = pieceLen[j];
            pieceLen[j] = pieceLen[i];
            pieceLen[i] = l;
        }
        open--;
        buf[open] = null;
    }

    /** The one header rewrite: the first segment's IP length and checksum, PSH, TCP checksum partial. */
    private void writeMerged(int f, ByteBuffer b, int h) {
        boolean v6 = isV6(b, h);
        int ihl = v6 ? IPV6_HEADER : Ipv4.MIN_HEADER;
        int len = total[f];
        if (v6) {
            b.putShort(h + 4, (short) (len - IPV6_HEADER)); // payload length; no header checksum
        } else {
            b.putShort(h + 2, (short) len);
            b.putShort(h + 10, (short) 0);
            b.putShort(h + 10, (short) Ipv4.internetChecksum(b, h, ihl));
        }
        if (pushed[f]) {
            b.put(h + ihl + 13, (byte) (b.get(h + ihl + 13) | PSH));
        }
        // NEEDS_CSUM: the field holds the pseudo-header sum; the stack finishes (or trusts) it
        b.putShort(h + ihl + 16, (short) fold(pseudoHeaderSum(b, h, len - ihl)));
        VnetHdr.writeGso(gsoHdr, v6 ? VnetHdr.GSO_TCPV6 : VnetHdr.GSO_TCPV4, headers[f], mss[f], ihl, 16);
        iov.clear().add(gsoHdr, 0, VnetHdr.LENGTH).add(b, h, headers[f] + mss[f]);
        int n = segments[f] - 1;
        int[] at = pieceAt[f];
        int[] pl = pieceLen[f];
        for (int i = 0; i < n; i++) {
            iov.add(b, at[i], pl[i]);
        }
        merged += segments[f];
        written++;
        sink.write(iov);
    }

    private void writeAlone(ByteBuffer b, int at, int len) {
        iov.clear();
        if (vnetHdr) {
            iov.add(plainHdr, 0, VnetHdr.LENGTH); // all zero: a whole packet, the kernel checks its checksums
        }
        iov.add(b, at, len);
        written++;
        sink.write(iov);
    }

    /** {@code a[i, i + len)} equals {@code b[j, j + len)}: 8 and 4 bytes a compare, then bytes (byte by byte it was ≈ 3 % of the wireguard receiving thread's CPU). */
    static boolean same(ByteBuffer a, int i, ByteBuffer b, int j, int len) {
        int k = 0;
        for (; k + 8 <= len; k += 8) {
            if (a.getLong(i + k) != b.getLong(j + k)) {
                return false;
            }
        }
        if (k + 4 <= len) {
            if (a.getInt(i + k) != b.getInt(j + k)) {
                return false;
            }
            k += 4;
        }
        for (; k < len; k++) {
            if (a.get(i + k) != b.get(j + k)) {
                return false;
            }
        }
        return true;
    }

    static int tcpHeaderLength(ByteBuffer b, int tcp) {
        return ((b.get(tcp + 12) & 0xf0) >>> 4) * 4;
    }

    static boolean checksumVerifies(ByteBuffer b, int at, int ihl, int len, Checksum checksum) {
        long sum = pseudoHeaderSum(b, at, len - ihl) + checksum.sum(b, at + ihl, len - ihl);
        return fold(sum) == 0xffff;
    }

    /** The TCP pseudo-header's sum: IPv4's (RFC 793) or IPv6's (RFC 8200 8.1), by the packet's version. */
    static long pseudoHeaderSum(ByteBuffer b, int ip, int tcpLength) {
        if (isV6(b, ip)) {
            return Ipv4.sum(b, ip + 8, 32) + TCP + tcpLength;
        }
        return (b.getShort(ip + 12) & 0xffff) + (b.getShort(ip + 14) & 0xffff)
                + (b.getShort(ip + 16) & 0xffff) + (b.getShort(ip + 18) & 0xffff) + TCP + tcpLength;
    }

    static int fold(long sum) {
        while ((sum >>> 16) != 0) {
            sum = (sum & 0xffff) + (sum >>> 16);
        }
        return (int) sum;
    }
}
