package org.jflannel.packet;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import org.jflannel.core.Ip4Net;
import org.jflannel.linuxnet.socket.IoVec;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class TcpSegmenterTest {
    private static final int ACK = 0x10;
    private static final int FIN = 0x01;
    private static final int PSH = 0x08;
    private static final int CWR = 0x80;

    @ParameterizedTest(name = "payload {0}, gso {1} -> {2} segments")
    @CsvSource({"5000, 1400, 4", "2800, 1400, 2", "1400, 1400, 1", "1, 1400, 1", "0, 1400, 1", "65000, 1420, 46"})
    void segmentsAreWhatTheKernelsGsoWouldSend(int payload, int gso, int expected) {
        ByteBuffer sp = superPacket(payload, CWR | PSH | ACK | FIN);
        ByteBuffer out = ByteBuffer.allocateDirect(128 << 10);

        int full = segment(sp, gso, out);

        int headers = 20 + 32;
        assertThat(full).isEqualTo(headers + Math.min(gso, payload));
        ByteBuffer joined = ByteBuffer.allocate(payload);
        int pos = 0;
        for (int i = 0; i < expected; i++) {
            ByteBuffer seg = out.duplicate().position(pos).slice();
            int len = seg.getShort(2) & 0xffff;
            seg.limit(len);
            boolean last = i == expected - 1;
            assertThat(Ipv4.valid(seg)).isTrue();
            assertThat(len).as("segment %d length", i).isEqualTo(last ? headers + payload - i * gso : full);
            assertThat(Packets.headerVerifies(seg)).as("IP checksum of segment %d", i).isTrue();
            assertThat(seg.getShort(4) & 0xffff).as("IP id").isEqualTo(0x1234 + i);
            assertThat(seg.getInt(20 + 4)).as("TCP seq").isEqualTo(1000 + i * gso);
            assertThat(seg.getInt(20 + 8)).as("TCP ack").isEqualTo(77);
            int flags = seg.get(20 + 13) & 0xff;
            assertThat(flags & ACK).isEqualTo(ACK);
            assertThat(flags & (FIN | PSH)).as("FIN/PSH on segment %d", i).isEqualTo(last ? FIN | PSH : 0);
            assertThat(flags & CWR).as("CWR on segment %d", i).isEqualTo(i == 0 ? CWR : 0);
            assertThat(tcpChecksumVerifies(seg)).as("TCP checksum of segment %d", i).isTrue();
            joined.put(seg.position(headers));
            pos += len;
        }
        assertThat(out.limit()).isEqualTo(pos);
        joined.flip();
        assertThat(joined).isEqualTo(sp.duplicate().position(headers));
    }

    @ParameterizedTest(name = "IPv6 payload {0}, gso {1} -> {2} segments")
    @CsvSource({"5000, 1388, 4", "1, 1388, 1", "65000, 1388, 47"})
    void ipv6SegmentsAreWhatTheKernelsGsoWouldSend(int payload, int gso, int expected) {
        ByteBuffer sp = superPacket6(payload, CWR | PSH | ACK | FIN);
        ByteBuffer out = ByteBuffer.allocateDirect(128 << 10);

        int full = segment(sp, gso, out);

        int headers = 40 + 32;
        assertThat(TcpSegmenter.headerLength(sp)).isEqualTo(headers);
        assertThat(full).isEqualTo(headers + Math.min(gso, payload));
        ByteBuffer joined = ByteBuffer.allocate(payload);
        int pos = 0;
        for (int i = 0; i < expected; i++) {
            ByteBuffer seg = out.duplicate().position(pos).slice();
            int len = 40 + (seg.getShort(4) & 0xffff);
            seg.limit(len);
            boolean last = i == expected - 1;
            assertThat(len).as("segment %d length", i).isEqualTo(last ? headers + payload - i * gso : full);
            for (int b = 0; b < 40; b++) {
                if (b != 4 && b != 5) {
                    assertThat(seg.get(b)).as("IPv6 header byte %d of segment %d", b, i).isEqualTo(sp.get(b));
                }
            }
            assertThat(seg.getInt(40 + 4)).as("TCP seq").isEqualTo(1000 + i * gso);
            assertThat(seg.getInt(40 + 8)).as("TCP ack").isEqualTo(77);
            int flags = seg.get(40 + 13) & 0xff;
            assertThat(flags & (FIN | PSH)).as("FIN/PSH on segment %d", i).isEqualTo(last ? FIN | PSH : 0);
            assertThat(flags & CWR).as("CWR on segment %d", i).isEqualTo(i == 0 ? CWR : 0);
            assertThat(tcp6ChecksumVerifies(seg)).as("TCP checksum of segment %d", i).isTrue();
            joined.put(seg.position(headers));
            pos += len;
        }
        assertThat(out.limit()).isEqualTo(pos);
        joined.flip();
        assertThat(joined).isEqualTo(sp.duplicate().position(headers));
    }

    @Test
    void ipv6WithAnExtensionHeaderIsNotCut() {
        ByteBuffer sp = superPacket6(3000, ACK);
        sp.put(6, (byte) 0); // hop-by-hop options first
        assertThat(segment(sp, 1388, ByteBuffer.allocateDirect(128 << 10))).isZero();
    }

    @Test
    void notTcpIsNotCut() {
        assertThat(segment(Packets.ipv4("10.0.0.1", "10.0.0.2", 17, 64, 3000), 1400,
                ByteBuffer.allocateDirect(128 << 10))).isZero();
    }

    @Test
    void aPartialChecksumIsCompleted() {
        ByteBuffer p = superPacket(999, ACK);
        p.putShort(20 + 16, (short) fold(TcpSegmenter.pseudoHeaderSum(p, 0, p.limit() - 20))); // as the kernel leaves it

        assertThat(TcpSegmenter.completeChecksum(p, 20, 16)).isTrue();

        assertThat(tcpChecksumVerifies(p)).isTrue();
        assertThat(TcpSegmenter.completeChecksum(p, p.limit(), 16)).as("start beyond the packet").isFalse();
    }

    /** IP (id 0x1234, DF) + TCP with 12 bytes of options (seq 1000, ack 77), payload 0, 1, 2, ... */
    static ByteBuffer superPacket(int payload, int flags) {
        int total = 20 + 32 + payload;
        ByteBuffer p = ByteBuffer.allocateDirect(total);
        p.put(0, (byte) 0x45);
        p.putShort(2, (short) Math.min(total, 0xffff));
        p.putShort(4, (short) 0x1234);
        p.putShort(6, (short) 0x4000);
        p.put(8, (byte) 64);
        p.put(9, (byte) 6);
        p.putInt(12, Ip4Net.parseAddress("10.244.1.2"));
        p.putInt(16, Ip4Net.parseAddress("10.244.2.3"));
        Packets.sealHeader(p);
        p.putShort(20, (short) 40000);
        p.putShort(22, (short) 5201);
        p.putInt(24, 1000);
        p.putInt(28, 77);
        p.put(32, (byte) (8 << 4));
        p.put(33, (byte) flags);
        p.putShort(34, (short) 501);
        for (int i = 0; i < 12; i++) {
            p.put(40 + i, (byte) (i < 2 ? 1 : 8)); // NOP NOP, then TS-ish bytes
        }
        for (int i = 0; i < payload; i++) {
            p.put(52 + i, (byte) i);
        }
        return p;
    }

    /** IPv6 (fd00:10:244:1::2 -> fd00:10:244:2::3, flow label 0x12345) + TCP as {@link #superPacket}. */
    static ByteBuffer superPacket6(int payload, int flags) {
        return Tcp6Packets.segment(0x6001_2345, 64, 1000, 77, flags, payload, i -> i * 7);
    }

    /** RFC 8200's pseudo-header (addresses, 32-bit length, next header 6) + the TCP segment sums to 0xffff (independent). */
    static boolean tcp6ChecksumVerifies(ByteBuffer seg) {
        return Tcp6Packets.onesSumTcp6(seg) == 0xffff;
    }

    /** The segments planned by {@link TcpSegmenter#plan}, gathered back to back into {@code out} (limit: their end). */
    static int segment(ByteBuffer sp, int gso, ByteBuffer out) {
        IoVec iov = new IoVec(2 * TcpSegmenter.MAX_SEGMENTS);
        ByteBuffer headers = ByteBuffer.allocateDirect(TcpSegmenter.MAX_SEGMENTS * TcpSegmenter.HEADER_SLOT);
        int full = TcpSegmenter.plan(sp, gso, headers, iov, new Checksum());
        out.clear();
        if (full > 0) {
            iov.gather(out);
        }
        out.flip();
        return full;
    }

    static boolean tcpChecksumVerifies(ByteBuffer seg) {
        return Packets.tcpChecksumVerifies(seg);
    }

    private static int fold(long sum) {
        while ((sum >>> 16) != 0) {
            sum = (sum & 0xffff) + (sum >>> 16);
        }
        return (int) sum;
    }
}
