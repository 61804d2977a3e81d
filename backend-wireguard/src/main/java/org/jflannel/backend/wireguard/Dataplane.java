package org.jflannel.backend.wireguard;

import java.nio.ByteBuffer;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.jflannel.backend.udp.Checksum;
import org.jflannel.backend.udp.TcpSegmenter;
import org.jflannel.backend.udp.TrainCoalescer;
import org.jflannel.backend.udp.VnetHdr;
import org.jflannel.backend.wireguard.protocol.Device;
import org.jflannel.backend.wireguard.protocol.Endpoint;
import org.jflannel.backend.wireguard.protocol.HandshakeLoad;
import org.jflannel.backend.wireguard.protocol.Peer;
import org.jflannel.linuxnet.DatagramBatch;
import org.jflannel.linuxnet.IoVec;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.TunDevice;
import org.jflannel.linuxnet.UdpBatchSocket;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The userspace WireGuard's two packet threads over linux-net, with the udp backend's batching.
 *
 * <p>{@code wg-tun-rx} reads {@code flannel-wg} until it is empty. With offloads (the TUN opened
 * with IFF_VNET_HDR, TSO4 and checksum offload on) a read may be a 64 KB TCP super-packet:
 * {@link TcpSegmenter} cuts it into MTU-sized segments with their checksums, as the kernel's GSO
 * would, and each segment is sealed. Sealed datagrams wait in {@link TxQueue} and go to their peer
 * by one {@code sendmmsg}, runs of equal size as UDP GSO messages (one per 64 datagrams): a 64 KB
 * read costs two system calls, not 90.
 *
 * <p>{@code wg-sock-rx} takes a batch of UDP GRO trains per {@code recvmmsg}, cuts them at the
 * segment size, hands each datagram to the {@link Device}, and what decrypts goes to the udp
 * backend's {@link TrainCoalescer}: consecutive segments of a TCP flow are written to the TUN as
 * one super-packet, the rest alone, at the end of the batch. It also runs the protocol's timers
 * every {@value #TICK_MILLIS} ms.
 *
 * <p>Without offloads ({@code JFLANNEL_WG_OFFLOAD=0}, or a kernel that refuses them) the same
 * threads read and write one packet per system call. Crypto runs on these two threads: one core
 * seals, one opens.
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

    private final TunDevice tun;
    private final UdpBatchSocket socket;
    private final HandshakeLoad load;
    private final Offloads offloads;
    private volatile Device device;
    private volatile boolean stopped;
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

    Dataplane(TunDevice tun, UdpBatchSocket socket, HandshakeLoad load, Offloads offloads) {
        this.tun = tun;
        this.socket = socket;
        this.load = load;
        this.offloads = offloads;
        this.coalescer = offloads.vnetHdr() ? new TrainCoalescer(true, offloads.coalesce(), false, this::writeTun) : null;
    }

    Offloads offloads() {
        return offloads;
    }

    void start(Device d) throws NetlinkException {
        this.device = d;
        tun.setNonBlocking();
        tunThread = new Thread(this::tunLoop, "wg-tun-rx");
        sockThread = new Thread(this::socketLoop, "wg-sock-rx");
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
            socket.send(iov, 0, 1, 0, to.address(), to.port());
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
        byte[] pkt = new byte[MAX_PACKET];
        TxQueue queue = new TxQueue(socket, offloads.gso());
        try {
            while (!stopped) {
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
                    packet.get(0, pkt, 0, len);
                    Device d = device;
                    Peer peer = d.peerForPacket(pkt, 0, len);
                    if (peer != null) {
                        queue.seal(d, peer, pkt, len);
                    }
                } else if (type == VnetHdr.GSO_TCPV4) {
                    segmentAndSeal(raw, packet, headers, plan, checksum, pkt, queue);
                }
                // other GSO types are never offered: the TUN was given TSO4 and CSUM only
            }
        } catch (NetlinkException | RuntimeException e) {
            if (!stopped) {
                LOG.error("wireguard tun reader failed dev={} error={}", tun.name(), e.toString());
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
        int ihl = (packet.get(0) & 0x0f) * 4;
        int headerLength = ihl + ((packet.get(ihl + 12) & 0xf0) >>> 4) * 4;
        int payload = packet.limit() - headerLength;
        int segments = plan.count() / 2;
        packet.get(0, pkt, 0, headerLength);
        Device d = device;
        Peer peer = d.peerForPacket(pkt, 0, headerLength);
        if (peer == null) {
            return;
        }
        for (int i = 0; i < segments; i++) {
            int len = Math.min(gsoSize, payload - i * gsoSize);
            headers.get(i * TcpSegmenter.HEADER_SLOT, pkt, 0, headerLength);
            packet.get(headerLength + i * gsoSize, pkt, headerLength, len);
            queue.seal(d, peer, pkt, headerLength + len);
        }
    }

    // ------------------------------------------------------------ socket → TUN

    private void socketLoop() {
        DatagramBatch batch = offloads.gro() ? new DatagramBatch(16, 65536) : new DatagramBatch(32, SLOT);
        byte[] msg = new byte[65536];
        long nextTick = System.nanoTime();
        Endpoint last = null;
        try {
            while (!stopped) {
                int n = socket.receive(batch);
                Device d = device;
                ByteBuffer data = batch.data();
                int handshakes = 0;
                for (int i = 0; i < n; i++) {
                    byte type = data.get(batch.offset(i));
                    if (type == 1 || type == 2) {
                        handshakes++; // handshakes come alone: GRO only merges datagrams of one size, data among them
                    }
                }
                load.backlog(handshakes); // before the work: the cookies must start while the backlog lasts
                for (int i = 0; i < n; i++) {
                    if (batch.truncated(i)) {
                        continue;
                    }
                    int address = batch.senderAddress(i);
                    int port = batch.senderPort(i);
                    if (last == null || last.address() != address || last.port() != port) {
                        last = new Endpoint(address, port);
                    }
                    int start = batch.offset(i);
                    int end = start + batch.length(i);
                    int step = Math.max(1, batch.segmentSize(i));
                    for (int at = start; at < end; at += step) {
                        int len = Math.min(step, end - at);
                        data.get(at, msg, 0, len);
                        d.receive(msg, 0, len, last);
                    }
                }
                if (coalescer != null) {
                    coalescer.flush();
                    rxAt = 0;
                }
                long now = System.nanoTime();
                if (now - nextTick >= 0) {
                    d.tick();
                    nextTick = now + TimeUnit.MILLISECONDS.toNanos(TICK_MILLIS);
                }
            }
        } catch (NetlinkException | RuntimeException e) {
            if (!stopped) {
                LOG.error("wireguard socket reader failed error={}", e.toString());
            }
        } finally {
            done.countDown();
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
        socket.close();
        tun.close();
    }
}
