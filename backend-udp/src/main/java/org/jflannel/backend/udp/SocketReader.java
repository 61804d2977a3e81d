package org.jflannel.backend.udp;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import org.jflannel.backend.udp.UdpCounters.Drop;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.socket.DatagramBatch;
import org.jflannel.linuxnet.socket.IoVec;
import org.jflannel.linuxnet.socket.UdpBatchSocket;
import org.jflannel.linuxnet.tun.TunDevice;
import org.jflannel.packet.TrainCoalescer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * UDP → TUN on one platform thread per socket ({@code udp-sock-rx-<i>}): one {@code recvmmsg}
 * fills a {@link DatagramBatch}, which {@link Inbound} checks and writes to this reader's TUN queue by
 * {@code writev}. Nothing is copied in Java and nothing is allocated per packet. The socket's receive
 * timeout bounds each wait, so {@link #close()} is noticed within it.
 */
final class SocketReader implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(SocketReader.class);
    /** With GRO a slot takes a train of up to 64 KB; without, one datagram of at most {@link #room}. */
    static final int GRO_SLOTS = 16;
    static final int PLAIN_SLOTS = 64;
    static final int GRO_SLOT_SIZE = 65_536;
    private static final Duration ERROR_PAUSE = Duration.ofMillis(100);

    private final UdpBatchSocket socket;
    private final TunDevice tun;
    private final PacketPath path;
    private final DatagramBatch batch;
    private final TrainCoalescer coalescer;
    private final Inbound inbound;
    private final Thread thread;
    private volatile boolean stopped;

    private SocketReader(UdpBatchSocket socket, int index, TunDevice tun, boolean vnetHdr, boolean gro, boolean coalesce,
            boolean verifyChecksums, int maxDatagram, int tunMtu, PacketPath path) {
        this.socket = socket;
        this.tun = tun;
        this.path = path;
        this.batch = gro ? new DatagramBatch(GRO_SLOTS, GRO_SLOT_SIZE) : new DatagramBatch(PLAIN_SLOTS, room(maxDatagram));
        this.coalescer = new TrainCoalescer(vnetHdr, coalesce, verifyChecksums, this::write);
        this.inbound = new Inbound(path, coalescer, vnetHdr, tunMtu, this::write);
        this.thread = new Thread(this::loop, "udp-sock-rx-" + index);
        this.thread.setDaemon(true);
    }

    /**
     * @param gro             UDP_GRO is on for the socket: slots hold trains
     * @param verifyChecksums sum each TCP segment before merging it (see {@link TrainCoalescer})
     * @param maxDatagram     the external MTU: room per slot without GRO (jumbo frames of peers still fit)
     */
    static SocketReader start(UdpBatchSocket socket, int index, TunDevice tun, boolean vnetHdr, boolean gro,
            boolean coalesce, boolean verifyChecksums, int maxDatagram, int tunMtu, PacketPath path) {
        SocketReader r = new SocketReader(socket, index, tun, vnetHdr, gro, coalesce, verifyChecksums, maxDatagram, tunMtu, path);
        r.thread.start();
        return r;
    }

    static int room(int maxDatagram) {
        return Math.min(Math.max(maxDatagram, 9000), TunReader.MAX_PACKET);
    }

    private void loop() {
        LOG.debug("socket reader started socket={} dev={}", socket, tun.name());
        boolean errorLogged = false;
        while (!stopped) {
            try {
                int n = socket.receive(batch);
                if (n > 0) {
                    forward(n);
                }
            } catch (NetlinkException e) {
                if (stopped) {
                    break;
                }
                if (!errorLogged) {
                    LOG.error("socket reader failed socket={} error={} (retrying; later errors at DEBUG)", socket, e.getMessage());
                    errorLogged = true;
                } else {
                    LOG.debug("socket reader failed socket={} error={}", socket, e.getMessage());
                }
                LockSupport.parkNanos(ERROR_PAUSE.toNanos());
            } catch (RuntimeException e) {
                coalescer.flush();
                path.drop(Drop.MALFORMED, "datagram dropped reason=exception error={}", e.toString());
            }
        }
        LOG.debug("socket reader stopped socket={}", socket);
    }

    private void forward(int n) {
        inbound.forward(batch, n);
    }

    private void write(IoVec packet) {
        try {
            tun.writev(packet);
        } catch (NetlinkException e) {
            path.drop(Drop.TUN_WRITE_FAILED, "packet to tun dropped reason=write-failed error={}", e.getMessage());
        }
    }

    /** Stops the thread and waits for it (at most a receive timeout or two). */
    @Override
    public void close() {
        stopped = true;
        PacketThreads.awaitStop(thread, LOG, "socket reader", "socket=" + socket);
    }
}
