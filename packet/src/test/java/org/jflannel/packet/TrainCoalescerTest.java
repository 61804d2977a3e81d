package org.jflannel.packet;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * GRO trains as a UDP GRO receive hands them over (segments back to back in one buffer), merged or
 * not as the kernel's GRO would. Every expected packet and checksum is computed independently
 * ({@link Packets}' byte-wise sums), never with the code under test.
 */
class TrainCoalescerTest {
    private static final int ACK = 0x10;
    private static final int PSH = 0x08;
    private static final int MSS = 1400;
    private static final String A = "10.244.1.2";
    private static final String B = "10.244.2.3";

    private final List<ByteBuffer> written = new ArrayList<>();
    /** Verifying, as the kernel's GRO: the rules below are the kernel's. */
    private TrainCoalescer coalescer = coalescer(true);

    private TrainCoalescer coalescer(boolean verify) {
        return new TrainCoalescer(true, true, verify, iov -> {
            ByteBuffer copy = ByteBuffer.allocate((int) iov.bytes());
            iov.gather(copy);
            written.add(copy.flip());
        });
    }

    /** The header comparison, in 8- and 4-byte steps: equal ranges at two offsets, and a difference found at every byte of every length to 40. */
    @Test
    void sameFindsADifferenceAtEveryByte() {
        ByteBuffer a = ByteBuffer.allocateDirect(64);
        ByteBuffer b = ByteBuffer.allocate(64);
        for (int k = 0; k < 64; k++) {
            a.put(k, (byte) (k * 7 + 1));
            b.put((k + 5) % 64, (byte) (k * 7 + 1));
        }
        for (int len = 0; len <= 40; len++) {
            assertThat(TrainCoalescer.same(a, 3, b, 8, len)).as("equal, length %d", len).isTrue();
            for (int d = 0; d < len; d++) {
                b.put(8 + d, (byte) (b.get(8 + d) ^ 0x10));
                assertThat(TrainCoalescer.same(a, 3, b, 8, len)).as("byte %d of %d differs", d, len).isFalse();
                b.put(8 + d, (byte) (b.get(8 + d) ^ 0x10));
            }
        }
    }

    @Test
    void aTrainOfOneFlowIsWrittenAsOneSuperPacketWithOneHeader() {
        List<ByteBuffer> segs = flow(1000, 10, 600, PSH);

        offer(train(segs));

        assertThat(written).hasSize(1);
        ByteBuffer w = written.get(0);
        assertThat(w.get(0)).as("flags: NEEDS_CSUM").isEqualTo((byte) VnetHdr.F_NEEDS_CSUM);
        assertThat(w.get(1)).as("gso_type TCPV4").isEqualTo((byte) VnetHdr.GSO_TCPV4);
        assertThat(le(w, 2)).as("hdr_len").isEqualTo(52);
        assertThat(le(w, 4)).as("gso_size").isEqualTo(MSS);
        assertThat(le(w, 6)).as("csum_start").isEqualTo(20);
        assertThat(le(w, 8)).as("csum_offset").isEqualTo(16);
        ByteBuffer merged = packet(w);
        int payload = 9 * MSS + 600;
        assertThat(merged.limit()).isEqualTo(52 + payload);
        assertThat(merged.getShort(2) & 0xffff).as("IP total length").isEqualTo(52 + payload);
        assertThat(ipHeaderVerifies(merged)).as("IP header checksum").isTrue();
        assertThat(merged.getInt(24)).as("seq of the first").isEqualTo(1000);
        assertThat(merged.get(33) & 0xff).as("PSH of the last").isEqualTo(ACK | PSH);
        for (int i = 0; i < payload; i++) {
            assertThat(merged.get(52 + i)).isEqualTo((byte) (1000 + i));
        }
        assertThat(finishPartialChecksum(merged)).as("TCP checksum once the stack finishes it").isTrue();
    }

    @Test
    void aHoleSplitsTheTrainWhereTheKernelWould() {
        List<ByteBuffer> segs = flow(1000, 6, MSS, 0);
        segs.remove(3);

        offer(train(segs));

        assertThat(summary()).containsExactly("seq=1000 segs=3", "seq=" + (1000 + 4 * MSS) + " segs=2");
    }

    @Test
    void aReorderedSegmentIsWrittenAloneAndSoAreTheOnesAfterIt() {
        List<ByteBuffer> segs = flow(1000, 5, MSS, 0);
        offer(train(List.of(segs.get(0), segs.get(1), segs.get(3), segs.get(2), segs.get(4))));

        assertThat(summary()).containsExactly("seq=1000 segs=2", "seq=" + (1000 + 3 * MSS) + " alone",
                "seq=" + (1000 + 2 * MSS) + " alone", "seq=" + (1000 + 4 * MSS) + " alone");
        assertThat(Packets.tcpChecksumVerifies(packet(written.get(1)))).as("a lone segment is untouched").isTrue();
    }

    @Test
    void aPshInTheMiddleEndsTheSuperPacket() {
        List<ByteBuffer> segs = flow(1000, 4, MSS, 0);
        segs.set(1, Packets.tcp(A, B, 40000, 5201, 1000 + MSS, 1, ACK | PSH, MSS));

        offer(train(segs));

        assertThat(summary()).containsExactly("seq=1000 segs=2", "seq=" + (1000 + 2 * MSS) + " segs=2");
        assertThat(packet(written.get(0)).get(33) & 0xff).isEqualTo(ACK | PSH);
    }

    @Test
    void aShortSegmentEndsTheSuperPacket() {
        List<ByteBuffer> segs = new ArrayList<>(flow(1000, 2, MSS, 0));
        segs.set(1, Packets.tcp(A, B, 40000, 5201, 1000 + MSS, 1, ACK, 700));
        segs.add(Packets.tcp(A, B, 40000, 5201, 1000 + MSS + 700, 2, ACK, 700));

        offer(train(segs));

        assertThat(summary()).containsExactly("seq=1000 segs=2", "seq=" + (1000 + MSS + 700) + " alone");
    }

    @Test
    void anIpv6PacketIsWrittenAloneAsItCameAndTheIpv4FlowAroundItStillMerges() {
        List<ByteBuffer> segs = flow(1000, 4, MSS, 0);
        // 40-byte IPv6 header + 60 bytes; read as IPv4 it would look like TCP with a 20-byte header
        // (traffic class 0x5_ in byte 0, byte 9 (inside the source address) = 6)
        ByteBuffer v6 = ByteBuffer.allocateDirect(100);
        v6.put(0, (byte) 0x65).putShort(4, (short) 60).put(6, (byte) 6).put(7, (byte) 64);
        for (int i = 8; i < 100; i++) {
            v6.put(i, (byte) (i == 9 ? 6 : i));
        }
        List<ByteBuffer> mixed = new ArrayList<>(segs);
        mixed.add(2, v6);
        ByteBuffer t = train(mixed);

        for (int at = 0, i = 0; i < mixed.size(); at += mixed.get(i).limit(), i++) {
            coalescer.offer(t, at, mixed.get(i).limit());
        }
        coalescer.flush();

        assertThat(written).hasSize(2);
        ByteBuffer alone = written.get(0);
        assertThat(alone.get(1)).as("no GSO").isEqualTo((byte) VnetHdr.GSO_NONE);
        assertThat(alone.get(0)).as("no checksum flags").isZero();
        assertThat(packet(alone)).isEqualTo(v6.duplicate().rewind());
        written.remove(0);
        assertThat(summary()).containsExactly("seq=1000 segs=4");
    }

    @Test
    void anIpv6FlowMergesIntoOneTcpv6SuperPacketBesideAnIpv4FlowOnTheSamePorts() {
        List<ByteBuffer> v6 = new ArrayList<>();
        for (int i = 0; i < 4; i++) {
            v6.add(tcp6(5000 + i * MSS, i == 3 ? ACK | PSH : ACK, i == 3 ? 600 : MSS, 64));
        }
        List<ByteBuffer> v4 = flow(1000, 2, MSS, 0);
        List<ByteBuffer> mixed = new ArrayList<>(List.of(v6.get(0), v4.get(0), v6.get(1), v6.get(2), v4.get(1), v6.get(3)));
        ByteBuffer t = train(mixed);
        for (int at = 0, i = 0; i < mixed.size(); at += mixed.get(i).limit(), i++) {
            coalescer.offer(t, at, mixed.get(i).limit());
        }
        coalescer.flush();

        ByteBuffer merged6 = written.stream().filter(w -> (packet(w).get(0) & 0xf0) == 0x60).findFirst().orElseThrow();
        assertThat(written).hasSize(2);
        assertThat(merged6.get(1)).as("GSO_TCPV6").isEqualTo((byte) VnetHdr.GSO_TCPV6);
        assertThat(le(merged6, 4)).as("gso size").isEqualTo(MSS);
        assertThat(le(merged6, 6)).as("csum start").isEqualTo(40);
        ByteBuffer p = packet(merged6);
        int payload = 3 * MSS + 600;
        assertThat(p.limit()).isEqualTo(40 + 32 + payload);
        assertThat(p.getShort(4) & 0xffff).as("payload length").isEqualTo(32 + payload);
        assertThat(p.get(40 + 13) & PSH).as("the last segment's PSH").isEqualTo(PSH);
        for (int i = 0; i < payload; i++) {
            assertThat(p.get(72 + i)).as("payload byte %d", i).isEqualTo((byte) (5000 + i));
        }
        // NEEDS_CSUM: the field holds the IPv6 pseudo-header's sum for the merged length, as the kernel wants
        assertThat(fold16(Tcp6Packets.pseudoSum6(p))).isEqualTo(p.getShort(40 + 16) & 0xffff);
        assertThat(summary().stream().filter(x -> x.startsWith("seq=1000"))).containsExactly("seq=1000 segs=2");
    }

    @Test
    void ipv6SegmentsWithAnotherHopLimitDoNotMerge() {
        List<ByteBuffer> v6 = List.of(tcp6(5000, ACK, MSS, 64), tcp6(5000 + MSS, ACK, MSS, 63));
        ByteBuffer t = train(v6);
        coalescer.offer(t, 0, v6.get(0).limit());
        coalescer.offer(t, v6.get(0).limit(), v6.get(1).limit());
        coalescer.flush();
        assertThat(written).hasSize(2).allMatch(w -> w.get(1) == VnetHdr.GSO_NONE);
    }

    /** A TCP/IPv6 segment fd00:10:244:1::2 -> fd00:10:244:2::3, ports 40000 -> 5201, 12 option bytes, payload (seq + i), checksum sealed. */
    private static ByteBuffer tcp6(int seq, int flags, int payload, int hopLimit) {
        ByteBuffer p = Tcp6Packets.segment(0x6000_0000, hopLimit, seq, 1, flags, payload, i -> seq + i);
        p.putShort(40 + 16, (short) ~Tcp6Packets.onesSumTcp6(p));
        return p;
    }

    private static int fold16(long sum) {
        while ((sum >>> 16) != 0) {
            sum = (sum & 0xffff) + (sum >>> 16);
        }
        return (int) sum;
    }

    @Test
    void aSegmentWithAnIpOptionIsWrittenAsItCame() {
        List<ByteBuffer> segs = flow(1000, 4, MSS, 0);
        segs.set(2, withIpOption(segs.get(2)));

        offer(train(segs));

        assertThat(summary()).containsExactly("seq=1000 segs=2", "seq=" + (1000 + 2 * MSS) + " alone",
                "seq=" + (1000 + 3 * MSS) + " alone");
        ByteBuffer opt = packet(written.get(1));
        assertThat(opt.get(0)).isEqualTo((byte) 0x46);
        assertThat(ipHeaderVerifies(opt)).isTrue();
    }

    @Test
    void aSegmentWithABadChecksumIsNotMergedButPassedOnForTheKernelToDrop() {
        List<ByteBuffer> segs = flow(1000, 4, MSS, 0);
        segs.get(1).put(100, (byte) (segs.get(1).get(100) ^ 0x40));

        offer(train(segs));

        assertThat(summary()).containsExactly("seq=1000 alone", "seq=" + (1000 + MSS) + " alone",
                "seq=" + (1000 + 2 * MSS) + " segs=2");
    }

    @Test
    void trustingTheOuterChecksumMergesWithoutSummingAndWritesTheSamePacket() {
        offer(train(flow(1000, 10, 600, PSH)));
        List<ByteBuffer> verified = List.copyOf(written);
        written.clear();
        coalescer = coalescer(false);

        offer(train(flow(1000, 10, 600, PSH)));

        assertThat(written).hasSize(1).isEqualTo(verified);
        assertThat(finishPartialChecksum(packet(written.get(0)))).isTrue();
    }

    @Test
    void trustingTheOuterChecksumDoesNotLookAtTheInnerOne() {
        // the documented gap (a peer sending with the UDP checksum off): a segment corrupted before it
        // was encapsulated is merged, and since the stack completes the partial checksum over what we
        // merged, nothing downstream notices
        coalescer = coalescer(false);
        List<ByteBuffer> segs = flow(1000, 4, MSS, 0);
        segs.get(1).put(100, (byte) (segs.get(1).get(100) ^ 0x40));

        offer(train(segs));

        assertThat(summary()).containsExactly("seq=1000 segs=4");
        assertThat(finishPartialChecksum(packet(written.get(0)))).isTrue();
    }

    @Test
    void interleavedFlowsAreMergedEachInItsOwnOrder() {
        List<ByteBuffer> a = flow(1000, 3, MSS, 0);
        List<ByteBuffer> b = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            b.add(Packets.tcp(A, B, 40001, 5201, 9000 + i * MSS, 100 + i, ACK, MSS));
        }

        offer(train(List.of(a.get(0), b.get(0), a.get(1), b.get(1), a.get(2), b.get(2))));

        assertThat(summary()).containsExactlyInAnyOrder("seq=1000 segs=3", "seq=9000 segs=3");
    }

    @Test
    void udpAndPureAcksAreWrittenAsTheyCame() {
        ByteBuffer udp = Packets.ipv4(A, B, 17, 64, 100);
        ByteBuffer ack = Packets.tcp(A, B, 40000, 5201, 1000, 1, ACK, 0);

        offer(train(List.of(udp, ack)));

        assertThat(written).hasSize(2);
        assertThat(packet(written.get(0))).isEqualTo(udp.rewind());
        assertThat(packet(written.get(1))).isEqualTo(ack.rewind());
        assertThat(written.get(1).get(1)).as("gso_type").isZero();
    }

    @Test
    void withoutMergingEverySegmentIsWrittenAlone() {
        TrainCoalescer plain = new TrainCoalescer(false, true, true, iov -> written.add(ByteBuffer.allocate((int) iov.bytes())));
        ByteBuffer t = train(flow(1000, 3, MSS, 0));
        for (int at = 0; at < t.limit(); at += 52 + MSS) {
            plain.offer(t, at, 52 + MSS);
        }
        plain.flush();
        assertThat(written).hasSize(3).allSatisfy(w -> assertThat(w.capacity()).as("no virtio header").isEqualTo(52 + MSS));
    }

    // ---- helpers

    /** {@code n} segments of one flow from {@code seq}, ids 1.., all MSS but the last ({@code lastPayload}, {@code lastFlags} added). */
    private static List<ByteBuffer> flow(int seq, int n, int lastPayload, int lastFlags) {
        List<ByteBuffer> segs = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            boolean last = i == n - 1;
            segs.add(Packets.tcp(A, B, 40000, 5201, seq + i * MSS, 1 + i, ACK | (last ? lastFlags : 0), last ? lastPayload : MSS));
        }
        return segs;
    }

    /** Segments back to back, as a UDP GRO receive slot holds them. */
    private static ByteBuffer train(List<ByteBuffer> segs) {
        ByteBuffer t = ByteBuffer.allocateDirect(segs.stream().mapToInt(ByteBuffer::limit).sum());
        for (ByteBuffer s : segs) {
            t.put(s.duplicate().rewind());
        }
        return t.flip();
    }

    private void offer(ByteBuffer train) {
        for (int at = 0; at < train.limit(); ) {
            int len = train.getShort(at + 2) & 0xffff;
            coalescer.offer(train, at, len);
            at += len;
        }
        coalescer.flush();
    }

    private List<String> summary() {
        List<String> s = new ArrayList<>();
        for (ByteBuffer w : written) {
            ByteBuffer p = packet(w);
            int ihl = (p.get(0) & 0x0f) * 4;
            int seq = p.getInt(ihl + 4);
            if (w.get(1) == VnetHdr.GSO_TCPV4) {
                int payload = p.limit() - ihl - 32;
                s.add("seq=" + seq + " segs=" + ((payload + le(w, 4) - 1) / le(w, 4)));
            } else {
                s.add("seq=" + seq + " alone");
            }
        }
        return s;
    }

    private static ByteBuffer packet(ByteBuffer written) {
        return written.slice(VnetHdr.LENGTH, written.limit() - VnetHdr.LENGTH);
    }

    private static int le(ByteBuffer b, int at) {
        return (b.get(at) & 0xff) | (b.get(at + 1) & 0xff) << 8;
    }

    private static boolean ipHeaderVerifies(ByteBuffer p) {
        byte[] h = new byte[(p.get(0) & 0x0f) * 4];
        for (int i = 0; i < h.length; i++) {
            h[i] = p.get(i);
        }
        return Packets.onesSum(h) == 0xffff;
    }

    /** What the stack does with NEEDS_CSUM (sum from csum_start, field included, stored inverted), then an independent check. */
    private static boolean finishPartialChecksum(ByteBuffer p) {
        byte[] tcp = new byte[p.limit() - 20];
        for (int i = 0; i < tcp.length; i++) {
            tcp[i] = p.get(20 + i);
        }
        p.putShort(36, (short) ~Packets.onesSum(tcp));
        return Packets.tcpChecksumVerifies(p);
    }

    /** The same segment with a 4-byte IP option (NOP ×3, EOL): IHL 6, lengths and checksums redone. */
    private static ByteBuffer withIpOption(ByteBuffer s) {
        ByteBuffer p = ByteBuffer.allocateDirect(s.limit() + 4);
        p.put(0, s, 0, 20);
        p.put(0, (byte) 0x46);
        p.putShort(2, (short) (s.limit() + 4));
        p.putInt(20, 0x01010100);
        p.put(24, s, 20, s.limit() - 20);
        Packets.sealIp(p);
        Packets.sealTcp(p);
        return p;
    }
}
