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
 * pick the peer, send it. The read waits with a bounded poll so {@link #close()} is noticed within
 * {@link #POLL_MILLIS} (a blocked read() is not woken when another thread closes the descriptor);
 * the TUN itself is closed by the owner after this thread ended. Nothing a packet does stops the loop.
 */
final class TunReader implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(TunReader.class);
    static final int POLL_MILLIS = 200;
    private static final Duration ERROR_PAUSE = Duration.ofMillis(100);

    private final TunDevice tun;
    private final PacketPath path;
    private final UdpSocket socket;
    private final Thread thread;
    private final ByteBuffer packet = ByteBuffer.allocateDirect(TunWriter.MAX_PACKET);
    private final ByteBuffer icmp = ByteBuffer.allocateDirect(128);
    private volatile boolean stopped;

    private TunReader(TunDevice tun, PacketPath path, UdpSocket socket) {
        this.tun = tun;
        this.path = path;
        this.socket = socket;
        this.thread = new Thread(this::loop, "udp-tun-rx-0");
        this.thread.setDaemon(true);
    }

    static TunReader start(TunDevice tun, PacketPath path, UdpSocket socket) {
        TunReader r = new TunReader(tun, path, socket);
        r.thread.start();
        return r;
    }

    private void loop() {
        LOG.debug("tun reader started dev={}", tun.name());
        boolean errorLogged = false;
        while (!stopped) {
            try {
                if (!tun.awaitReadable(POLL_MILLIS)) {
                    continue;
                }
                packet.clear();
                int n = tun.read(packet);
                packet.clear().limit(n);
                forward();
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
            int len = packet.limit();
            if (socket.send(packet, peer.endpoint())) {
                path.counters().sent(len);
            } else {
                path.drop(Drop.SEND_FAILED, "packet to peer dropped reason=socket-backlog-full peer={}", peer);
            }
        } else if (icmp.limit() > 0) {
            try {
                tun.write(icmp);
            } catch (NetlinkException e) {
                path.drop(Drop.TUN_WRITE_FAILED, "icmp reply to tun dropped reason=write-failed error={}", e.getMessage());
            }
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
