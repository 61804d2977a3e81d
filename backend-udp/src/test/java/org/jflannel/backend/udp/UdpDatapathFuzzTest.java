package org.jflannel.backend.udp;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.nio.ByteBuffer;
import java.util.List;
import org.jflannel.backend.udp.UdpCounters.Drop;
import org.jflannel.core.Ip4Net;
import org.jflannel.linuxnet.socket.IoVec;
import org.jflannel.packet.Checksum;
import org.jflannel.packet.Ipv4;
import org.jflannel.packet.TcpSegmenter;
import org.jflannel.packet.TrainCoalescer;
import org.jflannel.packet.VnetHdr;

/**
 * The udp backend's two packet readers on hostile bytes, through the calls they make per packet.
 *
 * <p>{@link #datagramsFromTheUnderlay}: what any host may send to port 8285. The input is records of
 * (sender: 1 byte, length: 2 bytes, datagram), laid out back to back in one buffer as a UDP GRO train
 * is. Each goes through {@link PacketPath#inbound} and, when admitted, to the {@link TrainCoalescer}
 * (or the partial-checksum path) as {@code SocketReader.forward} does. Properties: a datagram is admitted
 * only from a peer's public IP and with an inner source inside that peer's subnet; every other one is
 * dropped and counted (admitted + counted drops = datagrams); what reaches the TUN is a virtio-net header
 * and an IPv4 packet whose total length is its length; never an exception.
 *
 * <p>{@link #packetsFromTheTun}: what a pod (or anything on the host) writes to flannel0, with the
 * virtio-net header first, as {@code TunReader.forwardOffloaded} takes it: partial checksums completed,
 * TSO super-packets cut by {@link TcpSegmenter#plan}. Properties: every planned segment is a whole IPv4
 * packet no longer than its header's total length says; never an exception.
 */
class UdpDatapathFuzzTest {
    private static final int[] SENDERS = {addr("192.0.2.2"), addr("192.0.2.3"), addr("192.0.2.4"), addr("198.51.100.9")};
    private static final PeerTable PEERS = PeerTable.of(List.of(
            new Peer(Ip4Net.parse("10.244.2.0/24"), new java.net.InetSocketAddress("192.0.2.2", 8285)),
            new Peer(Ip4Net.parse("10.244.3.0/24"), new java.net.InetSocketAddress("192.0.2.3", 8285)),
            new Peer(Ip4Net.parse("10.244.4.0/24"), new java.net.InetSocketAddress("192.0.2.4", 8285))));
    private static final ByteBuffer TRAIN = ByteBuffer.allocateDirect(65_536);
    private static final ByteBuffer OUT = ByteBuffer.allocateDirect(2 * 65_536);
    private static final ByteBuffer RAW = ByteBuffer.allocateDirect(VnetHdr.LENGTH + 65_536);
    private static final ByteBuffer HEADERS = ByteBuffer.allocateDirect(TcpSegmenter.MAX_SEGMENTS * TcpSegmenter.HEADER_SLOT);
    private static final ByteBuffer ICMP = ByteBuffer.allocateDirect(1024);
    private static final IoVec IOV = new IoVec(2 * TcpSegmenter.MAX_SEGMENTS);
    // one per receiving thread in the daemon, reused batch after batch: here too (each holds native memory)
    private static final TrainCoalescer[] COALESCERS = {
        new TrainCoalescer(true, true, false, UdpDatapathFuzzTest::checkWritten),
        new TrainCoalescer(true, true, true, UdpDatapathFuzzTest::checkWritten)};

    @FuzzTest(maxDuration = "5m")
    void datagramsFromTheUnderlay(byte[] input) {
        if (input.length == 0) {
            return;
        }
        PacketPath path = new PacketPath(new UdpCounters());
        path.peers(PEERS);
        TrainCoalescer coalescer = COALESCERS[input[0] & 1];
        TRAIN.clear();
        int datagrams = 0;
        int admitted = 0;
        for (int i = 1; i + 3 <= input.length; ) {
            int sender = SENDERS[(input[i] & 0xff) % SENDERS.length];
            int len = Math.min(((input[i + 1] & 0xff) << 8 | (input[i + 2] & 0xff)), input.length - i - 3);
            i += 3;
            if (len == 0 || TRAIN.position() + len > TRAIN.capacity()) {
                break;
            }
            int at = TRAIN.position();
            TRAIN.put(input, i, len);
            i += len;
            datagrams++;
            int source = len >= 16 ? TRAIN.getInt(at + 12) : 0;
            if (path.inbound(TRAIN, at, len, sender)) {
                admitted++;
                if (!PEERS.allows(sender, source)) {
                    throw new AssertionError("admitted a datagram whose inner source is outside the sender's subnet");
                }
                int plen = Ipv4.totalLength(TRAIN, at);
                if (PartialChecksum.offset(TRAIN, at, plen) > 0) {
                    coalescer.flush();
                } else {
                    coalescer.offer(TRAIN, at, plen);
                }
            }
        }
        coalescer.flush();
        long dropped = 0;
        for (Drop d : Drop.values()) {
            dropped += path.counters().drops(d);
        }
        if (admitted + dropped != datagrams) {
            throw new AssertionError("datagrams " + datagrams + " admitted " + admitted + " counted drops " + dropped);
        }
    }

    @FuzzTest(maxDuration = "5m")
    void packetsFromTheTun(byte[] input) {
        if (input.length < VnetHdr.LENGTH || input.length > RAW.capacity()) {
            return;
        }
        PacketPath path = new PacketPath(new UdpCounters());
        path.peers(PEERS);
        RAW.clear();
        RAW.put(input).flip();
        ByteBuffer packet = RAW.slice(VnetHdr.LENGTH, input.length - VnetHdr.LENGTH);
        int type = VnetHdr.gsoType(RAW);
        if ((VnetHdr.flags(RAW) & VnetHdr.F_NEEDS_CSUM) != 0 && type == VnetHdr.GSO_NONE
                && !TcpSegmenter.completeChecksum(packet, VnetHdr.csumStart(RAW), VnetHdr.csumOffset(RAW))) {
            return;
        }
        Peer peer = path.outbound(packet, ICMP);
        if (peer == null || type != VnetHdr.GSO_TCPV4) {
            return;
        }
        int full = TcpSegmenter.plan(packet, VnetHdr.gsoSize(RAW), HEADERS, IOV, new Checksum());
        if (full == 0) {
            return;
        }
        for (int i = 0; i < IOV.count(); i += 2) {
            OUT.clear();
            IOV.gather(i, 2, OUT);
            OUT.flip();
            if (!Ipv4.valid(OUT) || Ipv4.totalLength(OUT) != OUT.limit() || OUT.limit() > full) {
                throw new AssertionError("segment " + i / 2 + " is no whole IPv4 packet: " + OUT.limit() + " bytes");
            }
        }
    }

    /** One write to the TUN: the virtio-net header, then an IPv4 (or IPv6) packet of exactly its stated length. */
    private static void checkWritten(IoVec packet) {
        OUT.clear();
        packet.gather(OUT);
        OUT.flip();
        int ip = OUT.limit() - VnetHdr.LENGTH;
        if (ip <= 0 || ip > 65_535) {
            throw new AssertionError("a TUN write of " + OUT.limit() + " bytes");
        }
        ByteBuffer p = OUT.slice(VnetHdr.LENGTH, ip);
        int version = p.get(0) & 0xf0;
        if (version == 0x40 && Ipv4.totalLength(p) != ip) {
            throw new AssertionError("an IPv4 packet of " + ip + " bytes says " + Ipv4.totalLength(p));
        }
        if (version == 0x60 && (p.getShort(4) & 0xffff) + 40 != ip) {
            throw new AssertionError("an IPv6 packet of " + ip + " bytes says " + ((p.getShort(4) & 0xffff) + 40));
        }
    }

    private static int addr(String s) {
        return Ip4Net.parseAddress(s);
    }
}
