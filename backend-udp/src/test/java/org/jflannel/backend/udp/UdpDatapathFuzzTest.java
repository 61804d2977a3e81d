package org.jflannel.backend.udp;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import org.jflannel.backend.udp.UdpCounters.Drop;
import org.jflannel.core.Ip4Net;
import org.jflannel.linuxnet.socket.DatagramBatch;
import org.jflannel.linuxnet.socket.IoVec;
import org.jflannel.packet.Checksum;
import org.jflannel.packet.Ipv4;
import org.jflannel.packet.TcpSegmenter;
import org.jflannel.packet.TrainCoalescer;
import org.jflannel.packet.VnetHdr;

/**
 * The udp backend's two packet readers on hostile bytes, through the calls they make per packet.
 *
 * <p>{@link #datagramsFromTheUnderlay}: what any host may send to port 8285, replayed into a real
 * {@link DatagramBatch} as {@code recvmmsg} fills it (sender, length, MSG_TRUNC, control messages) and
 * handed to {@link Inbound#forward}, the socket reader's own code. The input: a mode byte (bit 0 which
 * coalescer, bit 1 the control messages are the input's last bytes, bit 2 all records form one GRO
 * train cut at the first one's length), then records of (sender: 1 byte, length: 2 bytes, datagram).
 * Properties: a datagram is admitted only from a peer's public IP and with an inner source inside that
 * peer's subnet; every other one is dropped and counted (admitted + counted drops = datagrams); what
 * reaches the TUN is a virtio-net header and an IPv4 packet whose total length is its length; never an
 * exception, whatever the control messages say.
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
    /** As {@link SocketReader} receives with UDP GRO: 16 slots of 64 KiB, reused input after input. */
    private static final DatagramBatch BATCH = new DatagramBatch(SocketReader.GRO_SLOTS, SocketReader.GRO_SLOT_SIZE);
    private static final byte[] TRAIN_BYTES = new byte[SocketReader.GRO_SLOT_SIZE];
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
        int mode = input[0];
        boolean train = (mode & 4) != 0;
        PacketPath path = new PacketPath(new UdpCounters());
        path.peers(PEERS);
        Inbound inbound = new Inbound(path, COALESCERS[mode & 1], true, 1472, UdpDatapathFuzzTest::checkWritten);
        // the records: each its own slot, or (train) all in slot 0 cut at the first one's length by a UDP_GRO message
        int slots = 0;
        int trainLength = 0;
        int trainSender = 0;
        int segment = 0;
        int i = 1;
        while (i + 3 <= input.length && slots < BATCH.slots()) {
            int sender = SENDERS[(input[i] & 0xff) % SENDERS.length];
            int len = Math.min(((input[i + 1] & 0xff) << 8 | (input[i + 2] & 0xff)), input.length - i - 3);
            i += 3;
            if (len == 0) {
                break;
            }
            if (train) {
                if (trainLength + len > BATCH.slotSize()) {
                    break;
                }
                System.arraycopy(input, i, TRAIN_BYTES, trainLength, len);
                segment = segment == 0 ? len : segment;
                trainSender = slots == 0 ? sender : trainSender;
                trainLength += len;
                slots = 1;
            } else {
                BATCH.replay(slots++, input, i, len, sockaddr(sender), (mode & 2) != 0 ? rawControl(input) : new byte[0]);
            }
            i += len;
        }
        if (train && trainLength > 0) {
            BATCH.replay(0, TRAIN_BYTES, 0, trainLength, sockaddr(trainSender), (mode & 2) != 0 ? rawControl(input) : gro(segment));
        }
        if (slots == 0) {
            return;
        }
        BATCH.replayed(slots);
        // what may get in: segments whose inner source is in the sender's subnet; everything else is a counted drop
        long datagrams = 0;
        long admissible = 0;
        for (int s = 0; s < slots; s++) {
            if (BATCH.truncated(s)) {
                datagrams++;
                continue;
            }
            int step = Math.max(1, BATCH.segmentSize(s));
            for (int at = BATCH.offset(s), end = at + BATCH.length(s); at < end; at += step) {
                datagrams++;
                int seg = Math.min(step, end - at);
                if (seg >= 20 && PEERS.allows(BATCH.senderAddress(s), BATCH.data().getInt(at + 12))) {
                    admissible++;
                }
            }
        }
        inbound.forward(BATCH, slots);
        long admitted = path.counters().packetsFromPeers();
        long dropped = 0;
        for (Drop d : Drop.values()) {
            dropped += path.counters().drops(d);
        }
        if (admitted > admissible) {
            throw new AssertionError("admitted " + admitted + " datagrams, only " + admissible + " have an inner source in the sender's subnet");
        }
        if (admitted + dropped != datagrams) {
            throw new AssertionError("datagrams " + datagrams + " admitted " + admitted + " counted drops " + dropped);
        }
    }

    /** A sockaddr_in as the kernel writes it: family (host order), port and address (network order). */
    private static byte[] sockaddr(int address) {
        return ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN).putShort((short) 2).order(ByteOrder.BIG_ENDIAN)
            .putShort((short) 8285).putInt(address).array();
    }

    /** One UDP_GRO control message (struct cmsghdr, then the segment size) as the kernel writes it. */
    private static byte[] gro(int segment) {
        return ByteBuffer.allocate(24).order(ByteOrder.nativeOrder()).putLong(20).putInt(17).putInt(104).putInt(segment).array();
    }

    /** The input's last bytes as control messages: odd lengths, levels and types the parser must step over. */
    private static byte[] rawControl(byte[] input) {
        return java.util.Arrays.copyOfRange(input, Math.max(1, input.length - 64), input.length);
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
