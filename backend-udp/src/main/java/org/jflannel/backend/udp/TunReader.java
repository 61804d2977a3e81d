package org.jflannel.backend.udp;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import org.jflannel.backend.udp.UdpCounters.Drop;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.TunDevice;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * TUN → UDP on one platform thread ({@code udp-tun-rx-0}): read a packet, let {@link PacketPath}
 * pick the peer, send it. With offloads (IFF_VNET_HDR + TSO) a read may be a 64 KB TCP
 * super-packet, cut by {@link TcpSegmenter} and sent with UDP GSO. The read waits with a bounded
 * poll so {@link #close()} is noticed within {@link #POLL_MILLIS} (a blocked read() is not woken
 * when another thread closes the descriptor); the TUN itself is closed by the owner after this
 * thread ended. Nothing a packet does stops the loop.
 */
final class TunReader implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(TunReader.class);
    static final int POLL_MILLIS = 200;
    private static final Duration ERROR_PAUSE = Duration.ofMillis(100);

    private final TunDevice tun;
    private final PacketPath path;
    private final UdpSocket socket;
    private final int hdr;
    private final Thread thread;
    /** What read() fills: [virtio_net_hdr when offloading][IP packet]; {@link #packet} views the IP packet. */
    private final ByteBuffer raw = ByteBuffer.allocateDirect(VnetHdr.LENGTH + TunWriter.MAX_PACKET);
    private final ByteBuffer packet;
    private final ByteBuffer icmpRaw = ByteBuffer.allocateDirect(VnetHdr.LENGTH + 128);
    private final ByteBuffer icmp;
    private final ByteBuffer segments;
    private volatile boolean stopped;

    private TunReader(TunDevice tun, boolean vnetHdr, PacketPath path, UdpSocket socket) {
        this.tun = tun;
        this.path = path;
        this.socket = socket;
        this.hdr = vnetHdr ? VnetHdr.LENGTH : 0;
        this.packet = raw.slice(hdr, raw.capacity() - hdr);
        this.icmp = icmpRaw.slice(hdr, icmpRaw.capacity() - hdr);
        this.segments = vnetHdr ? ByteBuffer.allocateDirect(2 * TunWriter.MAX_PACKET) : null;
        this.thread = new Thread(this::loop, "udp-tun-rx-0");
        this.thread.setDaemon(true);
    }

    /** @param vnetHdr the TUN was opened with IFF_VNET_HDR (offloads on) */
    static TunReader start(TunDevice tun, boolean vnetHdr, PacketPath path, UdpSocket socket) {
        TunReader r = new TunReader(tun, vnetHdr, path, socket);
        r.thread.start();
        return r;
    }

    private void loop() {
        LOG.debug("tun reader started dev={} vnetHdr={}", tun.name(), hdr > 0);
        boolean errorLogged = false;
        while (!stopped) {
            try {
                if (!tun.awaitReadable(POLL_MILLIS)) {
                    continue;
                }
                raw.clear();
                int n = tun.read(raw);
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
                    LOG.error("tun read failed dev={} error={} (retrying; later errors at DEBUG)", tun.name(), e.getMessage());
                    errorLogged = true;
                } else {
                    LOG.debug("tun read failed dev={} error={}", tun.name(), e.getMessage());
                }
                LockSupport.parkNanos(ERROR_PAUSE.toNanos());
            } catch (RuntimeException e) {
                path.drop(Drop.MALFORMED, "packet from tun dropped reason=exception error={}", e.toString());
            }
        }
        LOG.debug("tun reader stopped dev={}", tun.name());
    }

    private void forward() {
        Peer peer = path.outbound(packet, icmp);
        if (peer != null) {
            send(peer, packet.limit(), 1);
        } else if (icmp.limit() > 0) {
            writeIcmp();
        }
    }

    /** The virtio_net_hdr says whether the packet is whole, needs its checksum finished, or is a TCP super-packet. */
    private void forwardOffloaded() {
        int gso = VnetHdr.gsoType(raw);
        if ((VnetHdr.flags(raw) & VnetHdr.F_NEEDS_CSUM) != 0 && gso == VnetHdr.GSO_NONE
                && !TcpSegmenter.completeChecksum(packet, VnetHdr.csumStart(raw), VnetHdr.csumOffset(raw))) {
            path.drop(Drop.MALFORMED, "packet from tun dropped reason=bad-csum-offsets length={}", packet.limit());
            return;
        }
        if (gso == VnetHdr.GSO_NONE) {
            forward();
            return;
        }
        if (gso != VnetHdr.GSO_TCPV4) {
            path.drop(Drop.MALFORMED, "packet from tun dropped reason=unexpected-gso-type type={}", gso);
            return;
        }
        Peer peer = path.outbound(packet, icmp);
        if (peer == null) {
            if (icmp.limit() > 0) {
                writeIcmp();
            }
            return;
        }
        int full = TcpSegmenter.segment(packet, VnetHdr.gsoSize(raw), segments);
        if (full == 0) {
            path.drop(Drop.MALFORMED, "packet from tun dropped reason=cannot-segment length={}", packet.limit());
            return;
        }
        int count = (segments.limit() + full - 1) / full;
        if (socket.sendSegments(segments, full, peer.endpoint())) {
            path.counters().sent(segments.limit(), count);
        } else {
            path.drop(Drop.SEND_FAILED, "packets to peer dropped reason=socket-backlog-full peer={}", peer);
        }
    }

    private void send(Peer peer, int len, int count) {
        if (socket.send(packet, peer.endpoint())) {
            path.counters().sent(len, count);
        } else {
            path.drop(Drop.SEND_FAILED, "packet to peer dropped reason=socket-backlog-full peer={}", peer);
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
        try {
            thread.join(Duration.ofSeconds(5).toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (thread.isAlive()) {
            LOG.warn("tun reader did not stop within 5 s dev={}", tun.name());
        }
    }
}
