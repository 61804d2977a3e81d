package org.jflannel.linuxnet.socket;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import org.jflannel.linuxnet.TestNs;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * UDP GSO out and UDP GRO in, on loopback in a throwaway namespace: one {@code sendmsg} of ten
 * segments gathered from two buffers arrives at a GRO socket as one train with its segment size,
 * and at a plain socket as ten datagrams; an idle receive returns 0 after the timeout.
 */
@Tag("netns")
class UdpBatchSocketIT {
    private static final int SEG = 1000;
    private static final UdpBatchSocket.Options OPTS = new UdpBatchSocket.Options(false, 1 << 20, 1 << 20, 200);

    @Test
    void aGsoSendArrivesAsOneGroTrainOrAsSeparateDatagrams() throws Exception {
        try (TestNs t = TestNs.create("udpb")) {
            t.exec("ip", "link", "set", "lo", "up");
            t.ns.call(() -> {
                Inet4Address lo = (Inet4Address) InetAddress.getByName("127.0.0.1");
                try (UdpBatchSocket gro = UdpBatchSocket.bind(lo, 0, OPTS);
                     UdpBatchSocket plain = UdpBatchSocket.bind(lo, 0, OPTS);
                     UdpBatchSocket tx = UdpBatchSocket.bind(lo, 0, OPTS)) {
                    assertThat(gro.enableGro()).as("UDP_GRO").isTrue();
                    assertThat(tx.gsoSupported()).as("UDP_SEGMENT").isTrue();
                    IoVec iov = payload();
                    int loAddr = 0x7f000001;

                    assertThat(tx.send(iov, 0, iov.count(), SEG, loAddr, gro.localPort())).isTrue();
                    DatagramBatch batch = new DatagramBatch(4, 65536);
                    assertThat(gro.receive(batch)).isEqualTo(1);
                    assertThat(batch.length(0)).isEqualTo(9 * SEG + 500);
                    assertThat(batch.segmentSize(0)).as("GRO segment size from the control message").isEqualTo(SEG);
                    assertThat(batch.senderAddress(0)).isEqualTo(loAddr);
                    assertThat(batch.senderPort(0)).isEqualTo(tx.localPort());
                    assertThat(batch.truncated(0)).isFalse();
                    for (int i = 0; i < batch.length(0); i++) {
                        assertThat(batch.data().get(i)).as("byte %d", i).isEqualTo((byte) (i / SEG * 7 + i));
                    }

                    assertThat(tx.send(iov, 0, iov.count(), SEG, loAddr, plain.localPort())).isTrue();
                    DatagramBatch slots = new DatagramBatch(16, 2048);
                    int got = 0;
                    for (int tries = 0; tries < 10 && got < 10; tries++) {
                        int n = plain.receive(slots);
                        for (int i = 0; i < n; i++) {
                            assertThat(slots.length(i)).isEqualTo(got + i == 9 ? 500 : SEG);
                            assertThat(slots.segmentSize(i)).isEqualTo(slots.length(i));
                        }
                        got += n;
                    }
                    assertThat(got).as("datagrams without GRO").isEqualTo(10);
                    assertThat(plain.receive(slots)).as("nothing more: the receive times out").isZero();
                }
                return null;
            });
        }
    }

    @Test
    void sendManySendsSeveralMessagesInOrderEachWithItsOwnSegmentSize() throws Exception {
        try (TestNs t = TestNs.create("udpm")) {
            t.exec("ip", "link", "set", "lo", "up");
            t.ns.call(() -> {
                Inet4Address lo = (Inet4Address) InetAddress.getByName("127.0.0.1");
                try (UdpBatchSocket plain = UdpBatchSocket.bind(lo, 0, OPTS);
                     UdpBatchSocket tx = UdpBatchSocket.bind(lo, 0, OPTS)) {
                    IoVec iov = payload();
                    ByteBuffer c = ByteBuffer.allocateDirect(700);
                    iov.add(c, 0, 700);
                    // m0: GSO 1000 (10 datagrams); m1: one plain 700-byte datagram; m2: GSO 3000 (4 datagrams)
                    int[] from = {0, 2, 0};
                    int[] count = {2, 1, 2};
                    int[] seg = {SEG, 0, 3000};
                    assertThat(tx.sendMany(iov, from, count, seg, 0, 3, 0x7f000001, plain.localPort())).isEqualTo(3);
                    assertThat(tx.sendMany(iov, from, count, seg, 1, 2, 0x7f000001, plain.localPort()))
                            .as("from message 1, up to n = 2: only m1").isEqualTo(1);

                    java.util.List<Integer> lengths = new java.util.ArrayList<>();
                    DatagramBatch slots = new DatagramBatch(16, 4096);
                    for (int tries = 0; tries < 20 && lengths.size() < 16; tries++) {
                        int n = plain.receive(slots);
                        for (int i = 0; i < n; i++) {
                            lengths.add(slots.length(i));
                        }
                    }
                    assertThat(lengths).containsExactly(1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 1000, 500,
                            700, 3000, 3000, 3000, 500, 700);
                    assertThat(plain.receive(slots)).as("nothing more").isZero();
                }
                return null;
            });
        }
    }

    /** 9,500 bytes in two pieces of two buffers (split inside a segment): byte i = i / 1000 * 7 + i. */
    private static IoVec payload() {
        ByteBuffer a = ByteBuffer.allocateDirect(4321);
        ByteBuffer b = ByteBuffer.allocateDirect(9500);
        for (int i = 0; i < 9500; i++) {
            byte v = (byte) (i / SEG * 7 + i);
            if (i < 4321) {
                a.put(i, v);
            } else {
                b.put(i, v);
            }
        }
        return new IoVec(8).add(a, 0, 4321).add(b, 4321, 9500 - 4321);
    }
}
