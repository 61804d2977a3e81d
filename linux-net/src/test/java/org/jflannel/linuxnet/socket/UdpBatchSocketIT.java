package org.jflannel.linuxnet.socket;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.TestNs;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * UDP GSO out and UDP GRO in, on loopback in a throwaway namespace: one {@code sendmsg} of ten
 * segments gathered from two buffers arrives at a GRO socket as one train with its segment size,
 * and at a plain socket as ten datagrams; an idle receive returns 0 after the timeout. The same over
 * IPv6, and a dual-stack ({@code ::}) socket hearing and answering an IPv4 peer as {@code ::ffff:…}.
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
                    assertThat(receiveWithin(gro, batch)).isEqualTo(1);
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

    @Test
    void anIpv6SocketSendsGsoTrainsToIpv6AndADualStackOneTalksToIpv4PeersAsMapped() throws Exception {
        try (TestNs t = TestNs.create("udp6")) {
            t.exec("ip", "link", "set", "lo", "up");
            t.ns.call(() -> {
                InetAddress lo6 = InetAddress.getByName("::1");
                InetAddress any6 = InetAddress.getByName("::");
                Inet4Address lo4 = (Inet4Address) InetAddress.getByName("127.0.0.1");
                try (UdpBatchSocket gro = UdpBatchSocket.bind(lo6, 0, OPTS);
                     UdpBatchSocket tx = UdpBatchSocket.bind(lo6, 0, OPTS);
                     UdpBatchSocket dual = UdpBatchSocket.bind(any6, 0, OPTS);
                     UdpBatchSocket v4 = UdpBatchSocket.bind(lo4, 0, OPTS)) {
                    assertThat(tx.ipv6()).isTrue();
                    assertThat(v4.ipv6()).isFalse();
                    assertThat(gro.enableGro()).as("UDP_GRO on AF_INET6").isTrue();
                    assertThat(tx.gsoSupported()).as("UDP_SEGMENT on AF_INET6").isTrue();
                    IoVec iov = payload();

                    // ::1 is high 0, low 1
                    assertThat(tx.send(iov, 0, iov.count(), SEG, 0L, 1L, gro.localPort())).isTrue();
                    DatagramBatch batch = new DatagramBatch(4, 65536);
                    assertThat(receiveWithin(gro, batch)).isEqualTo(1);
                    assertThat(batch.length(0)).isEqualTo(9 * SEG + 500);
                    assertThat(batch.segmentSize(0)).isEqualTo(SEG);
                    assertThat(batch.senderHigh(0)).isZero();
                    assertThat(batch.senderLow(0)).as("sender ::1").isEqualTo(1L);
                    assertThat(batch.senderPort(0)).isEqualTo(tx.localPort());
                    for (int i = 0; i < batch.length(0); i++) {
                        assertThat(batch.data().get(i)).as("byte %d", i).isEqualTo((byte) (i / SEG * 7 + i));
                    }

                    // an IPv4 peer of the dual-stack socket: heard as ::ffff:127.0.0.1, answered by its int address
                    long mapped = 0xffffL << 32 | 0x7f000001L;
                    assertThat(v4.sendMany(iov, new int[] {0}, new int[] {2}, new int[] {SEG}, 0, 1, 0x7f000001,
                            dual.localPort())).isEqualTo(1);
                    DatagramBatch slots = new DatagramBatch(16, 2048);
                    int n = receiveWithin(dual, slots);
                    assertThat(n).isPositive();
                    assertThat(slots.senderHigh(0)).isZero();
                    assertThat(slots.senderLow(0)).isEqualTo(mapped);
                    assertThat(slots.senderAddress(0)).isEqualTo(0x7f000001);
                    assertThat(slots.senderPort(0)).isEqualTo(v4.localPort());
                    assertThat(dual.send(iov, 0, 1, 0, 0L, mapped, v4.localPort())).isTrue();
                    DatagramBatch big = new DatagramBatch(2, 8192);
                    assertThat(receiveWithin(v4, big)).isEqualTo(1);
                    assertThat(big.length(0)).isEqualTo(4321);
                    assertThat(big.senderLow(0)).as("an IPv4 sender reads as mapped").isEqualTo(mapped);

                    // an IPv6 destination on an IPv4 socket: refused before the kernel, naming the socket
                    org.assertj.core.api.Assertions.assertThatThrownBy(() -> v4.send(iov, 0, 1, 0, 0L, 1L, 9))
                            .isInstanceOf(org.jflannel.linuxnet.NetlinkException.class)
                            .hasMessageContaining("EAFNOSUPPORT");
                }
                return null;
            });
        }
    }

    /**
     * {@code s.receive(batch)} retried while it times out: loopback hands the datagrams over in a softirq, which a
     * loaded machine may leave to ksoftirqd, later than one 200 ms receive timeout. 25 tries, 5 s at most.
     */
    private static int receiveWithin(UdpBatchSocket s, DatagramBatch batch) throws NetlinkException {
        for (int tries = 1; ; tries++) {
            int n = s.receive(batch);
            if (n > 0 || tries == 25) {
                return n;
            }
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
