package org.jflannel.backend.udp;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import org.jflannel.backend.udp.UdpCounters.Drop;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.socket.IoVec;
import org.jflannel.linuxnet.socket.UdpBatchSocket;
import org.jflannel.linuxnet.tun.TunDevice;
import org.jflannel.packet.Checksum;
import org.jflannel.packet.TcpSegmenter;
import org.jflannel.packet.VnetHdr;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * TUN → UDP on one platform thread per TUN queue ({@code udp-tun-rx-<i>}): read a packet, let
 * {@link PacketPath} pick the peer, send it from this same thread (no hand-off to another thread:
 * a full socket buffer blocks the read, so the backlog waits in flannel0's queue where TCP sees it).
 * With offloads (IFF_VNET_HDR + TSO) a read may be a 64 KB TCP super-packet: {@link TcpSegmenter}
 * rebuilds each segment's headers beside it, and one {@code sendmmsg} sends them all as UDP GSO
 * messages of up to {@link #GSO_SEGMENTS} datagrams (and 65,507 bytes) each, gathered from those
 * headers and the payload where it was read.
 * flannel0's descriptor is non-blocking: the reader reads first and polls (bounded, so
 * {@link #close()} is noticed within {@link #POLL_MILLIS}) only when the queue is empty.
 * Nothing a packet does stops the loop.
 */
final class TunReader implements AutoCloseable {

    /** Where datagrams go: {@link UdpBatchSocket#send} itself, or (for comparison) a {@link HandoffSender}. */
    interface Out {
        boolean send(IoVec iov, int from, int count, int segmentSize, int address, int port) throws NetlinkException;

        /** The socket itself: one system call per send, and per {@link #sendMany}. */
        static Out of(UdpBatchSocket socket) {
            return new Out() {
                @Override
                public boolean send(IoVec iov, int from, int count, int segmentSize, int address, int port)
                        throws NetlinkException {
                    return socket.send(iov, from, count, segmentSize, address, port);
                }

                @Override
                public int sendMany(IoVec iov, int[] from, int[] count, int[] segmentSize, int first, int n, int address,
                        int port) throws NetlinkException {
                    return socket.sendMany(iov, from, count, segmentSize, first, n, address, port);
                }
            };
        }

        /** Messages [first, n) as in {@link UdpBatchSocket#sendMany}: how many went, from {@code first} on. */
        default int sendMany(IoVec iov, int[] from, int[] count, int[] segmentSize, int first, int n, int address, int port)
                throws NetlinkException {
            int sent = 0;
            for (int i = first; i < n && send(iov, from[i], count[i], segmentSize[i], address, port); i++) {
                sent++;
            }
            return sent;
        }
    }

    private static final Logger LOG = LoggerFactory.getLogger(TunReader.class);
    static final int POLL_MILLIS = 200;
    static final int MAX_PACKET = 65535;
    /** UDP GSO: at most 64 segments per call (UDP_MAX_SEGMENTS of older kernels) and a UDP datagram's 65,507 bytes. */
    static final int GSO_SEGMENTS = 64;
    static final int GSO_BYTES = 65_507;
    private static final Duration ERROR_PAUSE = Duration.ofMillis(100);

    private final TunDevice tun;
    private final PacketPath path;
    private final Out socket;
    private final int hdr;
    private final Thread thread;
    /** What read() fills: [virtio_net_hdr when offloading][IP packet]; {@link #packet} views the IP packet. */
    private final ByteBuffer raw = ByteBuffer.allocateDirect(VnetHdr.LENGTH + MAX_PACKET);
    private final ByteBuffer packet;
    private final ByteBuffer icmpRaw = ByteBuffer.allocateDirect(VnetHdr.LENGTH + 128);
    private final ByteBuffer icmp;
    private final ByteBuffer headers = ByteBuffer.allocateDirect(TcpSegmenter.MAX_SEGMENTS * TcpSegmenter.HEADER_SLOT);
    private final IoVec iov = new IoVec(2 * TcpSegmenter.MAX_SEGMENTS);
    private final Checksum checksum = new Checksum();
    // the messages of one super-packet's sendmmsg: iovec range and segment size each
    private final int[] msgFrom = new int[TcpSegmenter.MAX_SEGMENTS];
    private final int[] msgCount = new int[TcpSegmenter.MAX_SEGMENTS];
    private final int[] msgSegment = new int[TcpSegmenter.MAX_SEGMENTS];
    private boolean gso;
    private volatile boolean stopped;

    private TunReader(TunDevice tun, int queue, boolean vnetHdr, boolean gso, PacketPath path, Out socket) {
        this.tun = tun;
        this.path = path;
        this.socket = socket;
        this.gso = gso;
        this.hdr = vnetHdr ? VnetHdr.LENGTH : 0;
        this.packet = raw.slice(hdr, raw.capacity() - hdr);
        this.icmp = icmpRaw.slice(hdr, icmpRaw.capacity() - hdr);
        this.thread = new Thread(this::loop, "udp-tun-rx-" + queue);
        this.thread.setDaemon(true);
    }

    /**
     * @param vnetHdr the TUN was opened with IFF_VNET_HDR (offloads on)
     * @param gso     the socket may send with UDP_SEGMENT
     */
    static TunReader start(TunDevice tun, int queue, boolean vnetHdr, boolean gso, PacketPath path, Out socket)
            throws NetlinkException {
        tun.setNonBlocking();
        TunReader r = new TunReader(tun, queue, vnetHdr, gso, path, socket);
        r.thread.start();
        return r;
    }

    private void loop() {
        LOG.debug("tun reader started dev={} vnetHdr={} gso={}", tun.name(), hdr > 0, gso);
        boolean errorLogged = false;
        while (!stopped) {
            try {
                raw.clear();
                int n = tun.tryRead(raw); // while packets keep coming: one system call each
                if (n < 0) { // the queue is empty (or the read failed: read() below says why)
                    if (!tun.awaitReadable(POLL_MILLIS)) {
                        continue;
                    }
                    raw.clear();
                    n = tun.read(raw);
                    if (n < 0) {
                        continue; // a spurious wake-up: poll again
                    }
                }
                if (n < hdr) {
                    path.drop(Drop.MALFORMED, "packet from tun dropped reason=short-read length={}", n);
                    continue;
                }
                packet.clear().limit(n - hdr);
                if (hdr == 0) {
                    forward();
                } else {
                    forwardOffloaded();
                }
            } catch (NetlinkException e) {
                if (stopped) {
                    break;
                }
                if (!errorLogged) {
                    LOG.error("tun reader failed dev={} error={} (retrying; later errors at DEBUG)", tun.name(), e.getMessage());
                    errorLogged = true;
                } else {
                    LOG.debug("tun reader failed dev={} error={}", tun.name(), e.getMessage());
                }
                LockSupport.parkNanos(ERROR_PAUSE.toNanos());
            } catch (RuntimeException e) {
                path.drop(Drop.MALFORMED, "packet from tun dropped reason=exception error={}", e.toString());
            }
        }
        LOG.debug("tun reader stopped dev={}", tun.name());
    }

    private void forward() throws NetlinkException {
        Peer peer = path.outbound(packet, icmp);
        if (peer != null) {
            iov.clear().add(packet, 0, packet.limit());
            send(peer, 0, 1);
        } else if (icmp.limit() > 0) {
            writeIcmp();
        }
    }

    /** The virtio_net_hdr says whether the packet is whole, needs its checksum finished, or is a TCP super-packet. */
    private void forwardOffloaded() throws NetlinkException {
        int type = VnetHdr.gsoType(raw);
        if ((VnetHdr.flags(raw) & VnetHdr.F_NEEDS_CSUM) != 0 && type == VnetHdr.GSO_NONE
                && !TcpSegmenter.completeChecksum(packet, VnetHdr.csumStart(raw), VnetHdr.csumOffset(raw))) {
            path.drop(Drop.MALFORMED, "packet from tun dropped reason=bad-csum-offsets length={}", packet.limit());
            return;
        }
        if (type == VnetHdr.GSO_NONE) {
            forward();
            return;
        }
        if (type != VnetHdr.GSO_TCPV4) {
            path.drop(Drop.MALFORMED, "packet from tun dropped reason=unexpected-gso-type type={}", type);
            return;
        }
        Peer peer = path.outbound(packet, icmp);
        if (peer == null) {
            if (icmp.limit() > 0) {
                writeIcmp();
            }
            return;
        }
        int full = TcpSegmenter.plan(packet, VnetHdr.gsoSize(raw), headers, iov, checksum);
        if (full == 0) {
            path.drop(Drop.MALFORMED, "packet from tun dropped reason=cannot-segment length={}", packet.limit());
            return;
        }
        int segments = iov.count() / 2;
        if (!gso) {
            for (int i = 0; i < segments; i++) {
                send(peer, 2 * i, 2);
            }
            return;
        }
        int step = Math.min(GSO_SEGMENTS, GSO_BYTES / full);
        int messages = 0;
        for (int first = 0; first < segments; first += step) {
            int n = Math.min(step, segments - first);
            msgFrom[messages] = 2 * first;
            msgCount[messages] = 2 * n;
            msgSegment[messages] = n > 1 ? full : 0;
            messages++;
        }
        sendMessages(peer, messages);
    }

    /** The planned GSO messages in as few sendmmsg calls as they fit; on a GSO refusal, datagram by datagram. */
    private void sendMessages(Peer peer, int messages) throws NetlinkException {
        for (int done = 0; done < messages; ) {
            int k;
            try {
                k = socket.sendMany(iov, msgFrom, msgCount, msgSegment, done, messages, peer.publicIp(), peer.port());
            } catch (NetlinkException e) {
                if (msgSegment[done] == 0) {
                    throw e; // a plain datagram failed: not about GSO
                }
                // e.g. EIO: the route's device cannot checksum a GSO datagram; from now on one datagram per segment
                gso = false;
                LOG.warn("udp gso refused, sending one datagram per segment from now on dev={} error={}", tun.name(), e.getMessage());
                for (int m = done; m < messages; m++) {
                    for (int i = 0; i < msgCount[m]; i += 2) {
                        send(peer, msgFrom[m] + i, 2);
                    }
                }
                return;
            }
            if (k == 0) {
                path.drop(Drop.SEND_FAILED, "packets to peer dropped reason=socket-buffer-full peer={}", peer);
                return;
            }
            for (int m = done; m < done + k; m++) {
                path.counters().sent((int) iov.bytes(msgFrom[m], msgCount[m]), msgCount[m] / 2);
            }
            done += k;
        }
    }

    /** Sends iovec pieces [from, from + count) as one datagram (GSO sends go through {@link #sendMessages}). */
    private void send(Peer peer, int from, int count) throws NetlinkException {
        if (socket.send(iov, from, count, 0, peer.publicIp(), peer.port())) {
            path.counters().sent((int) iov.bytes(from, count), 1);
        } else {
            path.drop(Drop.SEND_FAILED, "packets to peer dropped reason=socket-buffer-full peer={}", peer);
        }
    }

    private void writeIcmp() {
        icmpRaw.clear().limit(hdr + icmp.limit()); // header bytes stay zero: a plain packet
        try {
            tun.write(icmpRaw);
        } catch (NetlinkException e) {
            path.drop(Drop.TUN_WRITE_FAILED, "icmp reply to tun dropped reason=write-failed error={}", e.getMessage());
        }
    }

    /** Stops the thread and waits for it (at most a few poll intervals). */
    @Override
    public void close() {
        stopped = true;
        PacketThreads.awaitStop(thread, LOG, "tun reader", "dev=" + tun.name());
    }
}
