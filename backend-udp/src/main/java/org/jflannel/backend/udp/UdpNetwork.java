package org.jflannel.backend.udp;

import java.util.List;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseEvent;
import org.jflannel.core.Network;
import org.jflannel.linuxnet.TunDevice;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The registered UDP network: owns {@code flannel0} (the TUN), the socket and the reader thread,
 * and keeps the peer table from lease events. {@link #apply} runs on the daemon's
 * {@code lease-events} thread; each batch publishes one new immutable {@link PeerTable} that the
 * packet paths pick up. There is no kernel state per peer, so {@link #reconcile()} has nothing to do.
 */
public final class UdpNetwork implements Network {
    private static final Logger LOG = LoggerFactory.getLogger(UdpNetwork.class);

    private final Lease own;
    private final int mtu;
    private final TunDevice tun;
    private final UdpSocket socket;
    private final TunReader reader;
    private final PacketPath path;
    private final PeerBook book;
    private volatile boolean closed;

    UdpNetwork(Lease own, int mtu, int port, TunDevice tun, UdpSocket socket, TunReader reader, PacketPath path) {
        this.own = own;
        this.mtu = mtu;
        this.tun = tun;
        this.socket = socket;
        this.reader = reader;
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
        return tun.name();
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

    /** Stops the reader, closes the socket, then the TUN: flannel0 and its route disappear. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        reader.close();
        socket.close();
        tun.close();
        LOG.info("udp network closed dev={}", tun.name());
    }
}
