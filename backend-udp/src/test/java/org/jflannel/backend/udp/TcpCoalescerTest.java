package org.jflannel.backend.udp;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class TcpCoalescerTest {
    private static final int ACK = 0x10;
    private static final int PSH = 0x08;
    private final TcpCoalescer coalescer = new TcpCoalescer();

    @Test
    void segmentsOfOneFlowBecomeTheSuperPacketAgain() {
        ByteBuffer original = TcpSegmenterTest.superPacket(10_000, PSH | ACK);
        List<ByteBuffer> segs = segments(original, 1400);

        for (ByteBuffer s : segs) {
            assertThat(coalescer.offer(s)).isTrue();
        }
        ByteBuffer raw = coalescer.take();

        assertThat(VnetHdr.flags(raw)).isEqualTo(VnetHdr.F_NEEDS_CSUM);
        assertThat(VnetHdr.gsoType(raw)).isEqualTo(VnetHdr.GSO_TCPV4);
        assertThat(VnetHdr.gsoSize(raw)).isEqualTo(1400);
        assertThat(VnetHdr.csumStart(raw)).isEqualTo(20);
        assertThat(VnetHdr.csumOffset(raw)).isEqualTo(16);
        assertThat((raw.get(2) & 0xff) | (raw.get(3) & 0xff) << 8).as("hdr_len").isEqualTo(52);
        ByteBuffer merged = raw.slice(VnetHdr.LENGTH, raw.limit() - VnetHdr.LENGTH);
        assertThat(merged.limit()).isEqualTo(original.limit());
        assertThat(Ipv4.totalLength(merged)).isEqualTo(original.limit());
        assertThat(Packets.headerVerifies(merged)).isTrue();
        assertThat(merged.get(20 + 13) & 0xff).as("flags: PSH of the last").isEqualTo(PSH | ACK);
        assertThat(merged.getInt(24)).as("seq of the first").isEqualTo(1000);
        assertThat(merged.slice(52, merged.limit() - 52)).isEqualTo(original.slice(52, original.limit() - 52));
        assertThat(TcpSegmenter.completeChecksum(merged, 20, 16)).isTrue(); // what the kernel will do
        assertThat(TcpSegmenterTest.tcpChecksumVerifies(merged)).isTrue();
        assertThat(coalescer.pending()).isFalse();
    }

    @Test
    void aLoneSegmentGoesAsItCame() {
        ByteBuffer one = segments(TcpSegmenterTest.superPacket(500, ACK), 1400).get(0);
        assertThat(coalescer.offer(one)).isTrue();

        ByteBuffer raw = coalescer.take();

        assertThat(VnetHdr.gsoType(raw)).isEqualTo(VnetHdr.GSO_NONE);
        assertThat(VnetHdr.flags(raw)).isZero();
        assertThat(raw.slice(VnetHdr.LENGTH, raw.limit() - VnetHdr.LENGTH)).isEqualTo(one.rewind());
    }

    @Test
    void aGapInTheSequencePshOrABadChecksumEndTheMerge() {
        List<ByteBuffer> segs = segments(TcpSegmenterTest.superPacket(7000, ACK), 1400);
        assertThat(coalescer.offer(segs.get(0))).isTrue();
        assertThat(coalescer.offer(segs.get(2))).as("gap").isFalse();

        ByteBuffer corrupt = copy(segs.get(1));
        corrupt.put(100, (byte) (corrupt.get(100) ^ 1));
        assertThat(coalescer.offer(corrupt)).as("bad TCP checksum").isFalse();

        assertThat(coalescer.offer(segs.get(1))).isTrue();
        coalescer.take();

        List<ByteBuffer> pushed = segments(TcpSegmenterTest.superPacket(2800, PSH | ACK), 1400);
        ByteBuffer first = copy(pushed.get(0));
        first.put(33, (byte) (PSH | ACK)); // PSH mid-stream (checksum fixed below)
        resealTcp(first);
        assertThat(coalescer.offer(first)).isTrue();
        assertThat(coalescer.offer(pushed.get(1))).as("after PSH").isFalse();
    }

    @Test
    void udpIsNotMerged() {
        assertThat(coalescer.offer(Packets.ipv4("10.0.0.1", "10.0.0.2", 17, 64, 100))).isFalse();
        assertThat(coalescer.pending()).isFalse();
    }

    private static List<ByteBuffer> segments(ByteBuffer superPacket, int gso) {
        ByteBuffer out = ByteBuffer.allocateDirect(128 << 10);
        TcpSegmenter.segment(superPacket, gso, out);
        List<ByteBuffer> list = new ArrayList<>();
        for (int pos = 0; pos < out.limit(); ) {
            int len = out.getShort(pos + 2) & 0xffff;
            list.add(copy(out.slice(pos, len)));
            pos += len;
        }
        return list;
    }

    private static ByteBuffer copy(ByteBuffer b) {
        ByteBuffer c = ByteBuffer.allocateDirect(b.limit());
        c.put(0, b, 0, b.limit());
        return c;
    }

    private static void resealTcp(ByteBuffer p) {
        p.putShort(36, (short) 0);
        long sum = TcpSegmenter.pseudoHeaderSum(p, 0, p.limit() - 20) + ((~Ipv4.internetChecksum(p, 20, p.limit() - 20)) & 0xffff);
        while ((sum >>> 16) != 0) {
            sum = (sum & 0xffff) + (sum >>> 16);
        }
        p.putShort(36, (short) ~sum);
    }
}
