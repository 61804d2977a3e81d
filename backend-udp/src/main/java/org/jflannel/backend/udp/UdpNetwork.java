package org.jflannel.backend.udp;

import java.util.List;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseEvent;
import org.jflannel.core.Network;
import org.jflannel.linuxnet.TunDevice;
import org.jflannel.linuxnet.UdpBatchSocket;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The registered UDP network: owns {@code flannel0} (the TUN and its queues), the sockets and the reader threads,
 * and keeps the peer table from lease events. {@link #apply} runs on the daemon's
 * {@code lease-events} thread; each batch publishes one new immutable {@link PeerTable} that the
 * packet paths pick up. There is no kernel state per peer, so {@link #reconcile()} has nothing to do.
 */
public final class UdpNetwork implements Network {
    private static final Logger LOG = LoggerFactory.getLogger(UdpNetwork.class);

    private final Lease own;
    private final int mtu;
    private final List<TunDevice> queues;
    private final List<UdpBatchSocket> sockets;
    private final List<AutoCloseable> readers;
    private final PacketPath path;
    private final PeerBook book;
    private volatile boolean closed;

    UdpNetwork(Lease own, int mtu, int port, List<TunDevice> queues, List<UdpBatchSocket> sockets,
            List<AutoCloseable> readers, PacketPath path) {
        this.own = own;
        this.mtu = mtu;
        this.queues = List.copyOf(queues);
        this.sockets = List.copyOf(sockets);
        this.readers = List.copyOf(readers);
        this.path = path;
        this.book = new PeerBook(own, port);
    }

    @Override
    public Lease lease() {
        return own;
    }

    @Override
    public int mtu() {
        return mtu;
    }

    public UdpCounters counters() {
        return path.counters();
    }

    /** Name of the TUN device ({@code flannel0} unless taken). */
    public String deviceName() {
        return queues.get(0).name();
    }

    /** Number of peers in the table. */
    public int peers() {
        return book.size();
    }

    @Override
    public void apply(List<LeaseEvent> batch) {
        if (!closed) {
            path.peers(book.apply(batch));
        }
    }

    @Override
    public void reconcile() {
        // nothing in the kernel per peer; flannel0 and its route go with the process (REFERENCE §7)
    }

    /** Stops the readers, closes the sockets, then the TUN queues: flannel0 and its route disappear. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        closeAll(readers, sockets, queues);
        UdpCounters c = path.counters();
        LOG.info("udp network closed dev={} toPeers={} fromPeers={} groTrains={} coalesced={} tunWrites={}", deviceName(),
                c.packetsToPeers(), c.packetsFromPeers(), c.groTrains(), c.segmentsCoalesced(), c.tunWrites());
    }

    /** Reader threads first (they use the descriptors), then sockets, then the TUN queues. */
    static void closeAll(List<AutoCloseable> readers, List<UdpBatchSocket> sockets, List<TunDevice> queues) {
        for (AutoCloseable r : readers) {
            try {
                r.close();
            } catch (Exception e) {
                LOG.warn("udp reader close failed error={}", e.toString());
            }
        }
        sockets.forEach(UdpBatchSocket::close);
        queues.forEach(TunDevice::close);
    }
}
