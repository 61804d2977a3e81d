package org.jflannel.backend.udp;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import org.jflannel.packet.Packets;
import org.junit.jupiter.api.Test;

class PartialChecksumTest {

    /** What a sender's stack leaves for a checksum-offloading device: the pseudo-header sum, not inverted. */
    private static void makePartial(ByteBuffer p, int csumOffset, int protocol) {
        int ihl = (p.get(0) & 0x0f) * 4;
        int len = p.limit() - ihl;
        byte[] pseudo = new byte[12];
        for (int i = 0; i < 8; i++) {
            pseudo[i] = p.get(12 + i);
        }
        pseudo[9] = (byte) protocol;
        pseudo[10] = (byte) (len >>> 8);
        pseudo[11] = (byte) len;
        p.putShort(ihl + csumOffset, (short) Packets.onesSum(pseudo));
    }

    @Test
    void aTcpSegmentWithTheWholeChecksumIsNotPartial() {
        ByteBuffer p = Packets.tcp("10.244.1.2", "10.244.2.2", 40000, 5201, 1000, 1, 0x10, 1400);
        assertThat(Packets.tcpChecksumVerifies(p)).isTrue();
        assertThat(PartialChecksum.offset(p, 0, p.limit())).isZero();
    }

    @Test
    void aTcpSuperPacketWithThePseudoHeaderSumIsPartialAtOffset16() {
        ByteBuffer p = Packets.tcp("10.244.1.2", "10.244.2.2", 40000, 5201, 1000, 1, 0x10, 60_000);
        makePartial(p, 16, 6);
        assertThat(PartialChecksum.offset(p, 0, p.limit())).isEqualTo(PartialChecksum.TCP_CSUM);
        assertThat(PartialChecksum.tcpHeaderLength(p, 20)).isEqualTo(32);
    }

    @Test
    void aPacketInsideABufferIsReadWhereItLies() {
        ByteBuffer p = Packets.tcp("10.244.1.2", "10.244.2.2", 40000, 5201, 1000, 1, 0x10, 100);
        makePartial(p, 16, 6);
        ByteBuffer b = ByteBuffer.allocateDirect(300);
        b.put(77, p, 0, p.limit());
        assertThat(PartialChecksum.offset(b, 77, p.limit())).isEqualTo(PartialChecksum.TCP_CSUM);
    }

    @Test
    void aUdpPacketWithThePseudoHeaderSumIsPartialAtOffset6AndChecksumZeroIsNot() {
        ByteBuffer p = Packets.ipv4("10.244.1.2", "10.244.2.2", 17, 64, 200);
        makePartial(p, 6, 17);
        assertThat(PartialChecksum.offset(p, 0, p.limit())).isEqualTo(PartialChecksum.UDP_CSUM);
        p.putShort(20 + 6, (short) 0); // no checksum at all
        assertThat(PartialChecksum.offset(p, 0, p.limit())).isZero();
    }

    @Test
    void icmpAndFragmentsAreNeverPartial() {
        ByteBuffer icmp = Packets.ipv4("10.244.1.2", "10.244.2.2", 1, 64, 64);
        makePartial(icmp, 16, 1);
        assertThat(PartialChecksum.offset(icmp, 0, icmp.limit())).isZero();
        ByteBuffer frag = Packets.ipv4("10.244.1.2", "10.244.2.2", 17, 64, 200, 0x2000, 5); // more fragments
        makePartial(frag, 6, 17);
        assertThat(PartialChecksum.offset(frag, 0, frag.limit())).isZero();
    }
}
