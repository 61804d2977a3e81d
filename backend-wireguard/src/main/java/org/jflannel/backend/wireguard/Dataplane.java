package org.jflannel.backend.wireguard;

import java.nio.ByteBuffer;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.jflannel.backend.wireguard.protocol.Device;
import org.jflannel.backend.wireguard.protocol.Endpoint;
import org.jflannel.backend.wireguard.protocol.HandshakeLoad;
import org.jflannel.backend.wireguard.protocol.Messages;
import org.jflannel.backend.wireguard.protocol.Peer;
import org.jflannel.backend.wireguard.protocol.Tally;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.socket.DatagramBatch;
import org.jflannel.linuxnet.socket.IoVec;
import org.jflannel.linuxnet.socket.UdpBatchSocket;
import org.jflannel.linuxnet.tun.TunDevice;
import org.jflannel.packet.Checksum;
import org.jflannel.packet.TcpSegmenter;
import org.jflannel.packet.TrainCoalescer;
import org.jflannel.packet.VnetHdr;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The userspace WireGuard's two packet threads over linux-net, with the batching of the udp backend (the
 * {@code packet} module's helpers, which both use).
 *
 * <p>{@code wg-tun-rx} reads {@code flannel-wg} until it is empty. With offloads (the TUN opened
 * with IFF_VNET_HDR, TSO4, TSO6 and checksum offload on) a read may be a 64 KB TCP super-packet:
 * {@link TcpSegmenter} cuts it into MTU-sized segments with their checksums, as the kernel's GSO
 * would, and each segment is sealed. Sealed datagrams wait in {@link TxQueue} and go to their peer
 * by one {@code sendmmsg}, runs of equal size as UDP GSO messages (one per 64 datagrams): a 64 KB
 * read costs two system calls, not 90.
 *
 * <p>{@code wg-sock-rx} takes a batch of UDP GRO trains per {@code recvmmsg}, cuts them at the
 * segment size, hands each datagram to the {@link Device}, and what decrypts goes to the
 * {@link TrainCoalescer}: consecutive segments of a TCP flow are written to the TUN as
 * one super-packet, the rest alone, at the end of the batch. It also runs the protocol's timers
 * every {@value #TICK_MILLIS} ms.
 *
 * <p>Crypto on more than one core: each packet thread has {@link Workers} ({@code wg-seal-*},
 * {@code wg-open-*}) that seal or open a batch with it; what must stay in order (counters reserved,
 * datagrams sent, replay window, delivery) stays on the packet thread.
 *
 * <p>Without offloads ({@code JFLANNEL_WG_OFFLOAD=0}, or a kernel that refuses them) the same
 * threads read and write one packet per system call.
 *
 * <p>IPv6 inner packets take the same path: TSO6 super-packets are cut as TSO4 ones ({@link
 * TcpSegmenter}), received segments merged as GSO_TCPV6 ({@link TrainCoalescer}). The socket is AF_INET, AF_INET6,
 * or dual-stack on {@code ::} (auto mode), as the device's endpoints need.
 */
final class Dataplane implements AutoCloseable, Device.Wire {
    private static final Logger LOG = LoggerFactory.getLogger(Dataplane.class);
    static final int TICK_MILLIS = 100;
    private static final int POLL_MILLIS = 100;
    /** Room for one sealed datagram of an MTU-sized packet (1,500 - 80 + 32 bytes at most on a 1,500 underlay: plenty). */
    static final int SLOT = 2048;
    private static final int MAX_PACKET = 65535;

    /** What the data plane may use: TUN offloads, UDP GSO on send, UDP GRO on receive, merging on the TUN write. */
    record Offloads(boolean vnetHdr, boolean gso, boolean gro, boolean coalesce) {
        static final Offloads NONE = new Offloads(false, false, false, false);
    }

    /** Datagrams one receive batch may hold: with GRO 16 trains of at most 64 datagrams. */
    private static final int GRO_SLOTS = 16;
    private static final int PLAIN_SLOTS = 32;
    private static final int MAX_DATAGRAMS = GRO_SLOTS * 64;

    private final String threadPrefix;
    private final TunDevice tun;
    private final UdpBatchSocket socket;
    private final HandshakeLoad load;
    private final Offloads offloads;
    private final Workers sealers;
    private final Workers openers;
    private volatile Device device;
    private volatile boolean stopped;
    private final ReaderFaults tunFaults;
    private final ReaderFaults sockFaults;
    private final CountDownLatch done = new CountDownLatch(2);
    private final ThreadLocal<ByteBuffer> sendBuffer = ThreadLocal.withInitial(() -> ByteBuffer.allocateDirect(SLOT));
    private final ThreadLocal<IoVec> sendIov = ThreadLocal.withInitial(() -> new IoVec(1));
    // the socket thread's output: decrypted packets gathered for the coalescer until the batch ends
    private final ByteBuffer rxPackets = ByteBuffer.allocateDirect(2 * 1024 * 1024);
    private int rxAt;
    private final ByteBuffer tunOut = ByteBuffer.allocateDirect(VnetHdr.LENGTH + MAX_PACKET);
    private final TrainCoalescer coalescer;
    private Thread tunThread;
    private Thread sockThread;

    /**
     * @param cryptoThreads threads besides each packet thread that seal (and, on the other side, open) its batches
     * @param threadPrefix  {@code wg} (flannel-wg) or {@code wg6} (flannel-wg-v6): the threads' names start with it
     */
    Dataplane(TunDevice tun, UdpBatchSocket socket, HandshakeLoad load, Offloads offloads, int cryptoThreads,
            String threadPrefix) {
        this.threadPrefix = threadPrefix;
        this.tun = tun;
        this.socket = socket;
        this.load = load;
        this.offloads = offloads;
        this.sealers = new Workers(cryptoThreads, threadPrefix + "-seal");
        this.openers = new Workers(cryptoThreads, threadPrefix + "-open");
        this.coalescer = offloads.vnetHdr() ? new TrainCoalescer(true, offloads.coalesce(), false, this::writeTun) : null;
        this.tunFaults = new ReaderFaults(LOG, "tun dev=" + tun.name());
        this.sockFaults = new ReaderFaults(LOG, "socket dev=" + tun.name());
    }

    Offloads offloads() {
        return offloads;
    }

    void start(Device d) throws NetlinkException {
        this.device = d;
        tun.setNonBlocking();
        tunThread = new Thread(this::tunLoop, threadPrefix + "-tun-rx");
        sockThread = new Thread(this::socketLoop, threadPrefix + "-sock-rx");
        tunThread.setDaemon(true);
        sockThread.setDaemon(true);
        tunThread.start();
        sockThread.start();
    }

    // ------------------------------------------------------------ Device.Wire

    /** Handshakes, cookie replies, keepalives and staged packets: one datagram, one sendmsg. */
    @Override
    public void send(byte[] datagram, int off, int len, Endpoint to) {
        if (to == null) {
            return;
        }
        ByteBuffer b = sendBuffer.get();
        b.clear();
        b.put(0, datagram, off, len);
        IoVec iov = sendIov.get().clear().add(b, 0, len);
        try {
            socket.send(iov, 0, 1, 0, to.high(), to.low(), to.port());
        } catch (NetlinkException e) {
            LOG.debug("wireguard send failed to={} error={}", to, e.getMessage());
        }
    }

    /**
     * Socket thread only: one decrypted packet for the TUN. With offloads it joins the batch's
     * coalescer (written at the batch's end, or now when the gathering buffer is full); without, it
     * is written at once.
     */
    @Override
    public void deliver(byte[] packet, int off, int len) {
        if (coalescer == null) {
            tunOut.clear();
            tunOut.put(packet, off, len).flip();
            try {
                tun.write(tunOut);
            } catch (NetlinkException e) {
                LOG.debug("wireguard tun write failed dev={} error={}", tun.name(), e.getMessage());
            }
            return;
        }
        if (rxAt + len > rxPackets.capacity()) {
            coalescer.flush();
            rxAt = 0;
        }
        rxPackets.put(rxAt, packet, off, len);
        coalescer.offer(rxPackets, rxAt, len);
        rxAt += len;
    }

    private void writeTun(IoVec packet) {
        try {
            tun.writev(packet);
        } catch (NetlinkException e) {
            LOG.debug("wireguard tun write failed dev={} error={}", tun.name(), e.getMessage());
        }
    }

    // ------------------------------------------------------------ TUN → socket

    private void tunLoop() {
        int hdr = offloads.vnetHdr() ? VnetHdr.LENGTH : 0;
        ByteBuffer raw = ByteBuffer.allocateDirect(hdr + MAX_PACKET);
        ByteBuffer packet = raw.slice(hdr, MAX_PACKET);
        ByteBuffer headers = ByteBuffer.allocateDirect(TcpSegmenter.MAX_SEGMENTS * TcpSegmenter.HEADER_SLOT);
        IoVec plan = new IoVec(2 * TcpSegmenter.MAX_SEGMENTS);
        Checksum checksum = new Checksum();
        byte[] pkt = new byte[128]; // headers only (IPv4 and TCP, 60 bytes each at most; IPv6's 40): packets go straight into the queue's slots
        TxQueue queue = new TxQueue(socket, offloads.gso(), sealers);
        try {
            while (!stopped) {
                try {
                    raw.clear();
                    int n = tun.tryRead(raw);
                    if (n < 0) {
                        queue.flush();
                        tun.awaitReadable(POLL_MILLIS);
                        continue;
                    }
                    int len = n - hdr;
                    if (len <= 0) {
                        continue;
                    }
                    packet.clear().limit(len);
                    int type = hdr == 0 ? VnetHdr.GSO_NONE : VnetHdr.gsoType(raw);
                    if (type == VnetHdr.GSO_NONE) {
                        if (hdr > 0 && (VnetHdr.flags(raw) & VnetHdr.F_NEEDS_CSUM) != 0
                                && !TcpSegmenter.completeChecksum(packet, VnetHdr.csumStart(raw), VnetHdr.csumOffset(raw))) {
                            continue; // offsets outside the packet: nothing a sane kernel sends
                        }
                        packet.get(0, pkt, 0, Math.min(len, 40)); // the IPv4 or IPv6 header's destination picks the peer
                        Device d = device;
                        Peer peer = d.peerForPacket(pkt, 0, len);
                        int at = peer == null ? -1 : queue.next(d, peer, len);
                        if (at >= 0) {
                            packet.get(0, queue.buffer(), at, len); // straight into its slot, sealed there in place
                            queue.commit(d, peer, len, d.now());
                        }
                    } else if (type == VnetHdr.GSO_TCPV4 || type == VnetHdr.GSO_TCPV6) {
                        segmentAndSeal(raw, packet, headers, plan, checksum, pkt, queue);
                    }
                    // other GSO types are never offered: the TUN was given TSO4, TSO6 and CSUM only
                } catch (NetlinkException e) {
                    if (stopped) {
                        break;
                    }
                    tunFaults.failed(e); // logged, a pause, and the reader goes on
                } catch (RuntimeException e) {
                    tunFaults.threw(e); // a packet no check caught: logged, the reader goes on
                }
            }
        } finally {
            done.countDown();
        }
    }

    /** A TSO super-packet: its segments (headers rebuilt, checksums complete) sealed one by one into the queue. */
    private void segmentAndSeal(ByteBuffer raw, ByteBuffer packet, ByteBuffer headers, IoVec plan, Checksum checksum,
            byte[] pkt, TxQueue queue) throws NetlinkException {
        int gsoSize = VnetHdr.gsoSize(raw);
        if (TcpSegmenter.plan(packet, gsoSize, headers, plan, checksum) == 0) {
            return;
        }
        int headerLength = TcpSegmenter.headerLength(packet); // IPv4 or IPv6, then TCP
        int payload = packet.limit() - headerLength;
        int segments = plan.count() / 2;
        packet.get(0, pkt, 0, headerLength);
        Device d = device;
        Peer peer = d.peerForPacket(pkt, 0, headerLength);
        if (peer == null) {
            return;
        }
        long now = d.now(); // one clock read for the burst's segments
        byte[] slots = queue.buffer();
        for (int i = 0; i < segments; i++) {
            int len = Math.min(gsoSize, payload - i * gsoSize);
            int at = queue.next(d, peer, headerLength + len);
            if (at < 0) {
                continue;
            }
            // each segment straight into its queue slot (one copy out of the TUN's buffer), sealed there in place
            headers.get(i * TcpSegmenter.HEADER_SLOT, slots, at, headerLength);
            packet.get(headerLength + i * gsoSize, slots, at + headerLength, len);
            queue.commit(d, peer, headerLength + len, now);
        }
    }

    // ------------------------------------------------------------ socket → TUN

    private void socketLoop() {
        DatagramBatch batch = offloads.gro() ? new DatagramBatch(GRO_SLOTS, 65536) : new DatagramBatch(PLAIN_SLOTS, SLOT);
        Receiving r = new Receiving(batch.slots() * batch.slotSize(), MAX_DATAGRAMS);
        Tally received = Tally.received(); // the peers' received bytes: one add per batch and peer
        long nextTick = System.nanoTime();
        try {
            while (!stopped) {
                try {
                    int n = socket.receive(batch);
                    Device d = device;
                    r.take(batch, n);
                    load.backlog(r.handshakes); // before the work: the cookies must start while the backlog lasts
                    if (r.allData) {
                        // data only (the usual batch): opened in place (on this thread and the openers at once), then finished in order
                        r.device = d;
                        r.now = d.now(); // one clock read for the batch
                        openers.run(r.count, r.openOne);
                        for (int j = 0; j < r.count; j++) {
                            if (r.ok[j]) {
                                d.finishData(r.opened[j], r.in, r.at[j] + Messages.DATA_HEADER, r.from[j], received, r.now);
                            }
                        }
                    } else {
                        for (int j = 0; j < r.count; j++) {
                            d.receive(r.in, r.at[j], r.length[j], r.from[j], received);
                        }
                    }
                    received.flush();
                    if (coalescer != null) {
                        coalescer.flush();
                        rxAt = 0;
                    }
                    long now = System.nanoTime();
                    if (now - nextTick >= 0) {
                        d.tick();
                        nextTick = now + TimeUnit.MILLISECONDS.toNanos(TICK_MILLIS);
                    }
                } catch (NetlinkException e) {
                    if (stopped) {
                        break;
                    }
                    sockFaults.failed(e); // logged, a pause, and the reader goes on
                } catch (RuntimeException e) {
                    sockFaults.threw(e); // a packet no check caught: logged, the reader goes on
                }
            }
        } finally {
            done.countDown();
        }
    }

    /**
     * One receive batch as datagrams: GRO trains cut at their segment size, copied into {@link #in}
     * at the offsets they had; each datagram is opened in place (its plaintext over its ciphertext,
     * after the 16-byte header): one array, no second copy of the batch.
     */
    private static final class Receiving {
        final byte[] in;
        final int[] at;
        final int[] length;
        final Endpoint[] from;
        final boolean[] ok;
        final Device.Opened[] opened;
        final java.util.function.IntConsumer openOne = this::openOne;
        int count;
        int handshakes;
        boolean allData;
        Device device;
        long now;

        Receiving(int bytes, int datagrams) {
            in = new byte[bytes];
            at = new int[datagrams];
            length = new int[datagrams];
            from = new Endpoint[datagrams];
            ok = new boolean[datagrams];
            opened = new Device.Opened[datagrams];
            for (int i = 0; i < datagrams; i++) {
                opened[i] = new Device.Opened();
            }
        }

        void take(DatagramBatch batch, int n) {
            ByteBuffer data = batch.data();
            count = 0;
            handshakes = 0;
            allData = true;
            Endpoint last = null;
            for (int i = 0; i < n; i++) {
                if (batch.truncated(i) || batch.senderPort(i) == 0) {
                    continue; // port 0: no endpoint could answer it (and Endpoint refuses it)
                }
                long high = batch.senderHigh(i);
                long low = batch.senderLow(i);
                int port = batch.senderPort(i);
                if (last == null || last.low() != low || last.high() != high || last.port() != port) {
                    last = new Endpoint(high, low, port);
                }
                int start = batch.offset(i);
                int end = start + batch.length(i);
                data.get(start, in, start, end - start);
                int step = Math.max(1, batch.segmentSize(i));
                for (int a = start; a < end && count < at.length; a += step) {
                    int len = Math.min(step, end - a);
                    at[count] = a;
                    length[count] = len;
                    from[count] = last;
                    if (!Device.isData(in, a, len)) {
                        allData = false;
                        if (in[a] == 1 || in[a] == 2) {
                            handshakes++; // handshakes come alone: GRO merges datagrams of one size, data among them
                        }
                    }
                    count++;
                }
            }
        }

        /** Any thread: datagram j opened in place. */
        private void openOne(int j) {
            ok[j] = device.open(in, at[j], length[j], in, at[j] + Messages.DATA_HEADER, opened[j], now);
        }
    }

    /** Stops both threads (each notices within its poll timeout), then closes the socket and the TUN. */
    @Override
    public void close() {
        stopped = true;
        try {
            if (tunThread != null && !done.await(5, TimeUnit.SECONDS)) {
                LOG.warn("wireguard packet threads did not stop within 5 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        sealers.close();
        openers.close();
        socket.close();
        tun.close();
    }
}
