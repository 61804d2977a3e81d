package org.jflannel.backend.udp;

import java.util.List;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseEvent;
import org.jflannel.core.Network;
import org.jflannel.linuxnet.socket.UdpBatchSocket;
import org.jflannel.linuxnet.tun.TunDevice;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The registered UDP network: owns {@code flannel0} (the TUN and its queues), the sockets and the reader threads,
 * and keeps the peer table from lease events. {@link #apply} runs on the daemon's
 * {@code lease-events} thread; each batch publishes one new immutable {@link PeerTable} that the
 * packet paths pick up and, with the kernel datapath, into its maps. There are no routes or
 * neighbours per peer, so {@link #reconcile()} has nothing to do.
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
    /** The kernel datapath, or null (off, or refused by the kernel); closed with the readers. */
    private final KernelPath kernel;
    private volatile boolean closed;

    UdpNetwork(Lease own, int mtu, int port, List<TunDevice> queues, List<UdpBatchSocket> sockets,
            List<AutoCloseable> readers, PacketPath path, KernelPath kernel) {
        this.own = own;
        this.mtu = mtu;
        this.queues = List.copyOf(queues);
        this.sockets = List.copyOf(sockets);
        this.readers = List.copyOf(readers);
        this.path = path;
        this.book = new PeerBook(own, port);
        this.kernel = kernel;
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
            if (kernel != null) {
                kernel.peers(book.peers());
            }
        }
    }

    /** True when the kernel datapath is attached. */
    public boolean kernelDatapath() {
        return kernel != null;
    }

    /** True while peers' kernel datagrams are decapsulated through the VXLAN-GPE device ({@code JFLANNEL_UDP_KERNEL=gpe}). */
    public boolean kernelGpe() {
        return kernel != null && kernel.gpe();
    }

    /** True once the VXLAN-GPE path has delivered and takes every peer kernel datagram (its trial is over). */
    public boolean kernelGpeConfirmed() {
        return kernel != null && kernel.gpeConfirmed();
    }

    /**
     * What {@link #kernelPath()} can say: {@code off} (no kernel datapath: switched off, or refused by the kernel),
     * {@code encap} (the kernel encapsulates, the packet threads decapsulate; also where {@code gpe} fell back),
     * {@code gpe_trial} (the VXLAN-GPE path on trial: one peer datagram a second through it), {@code gpe} (every peer
     * kernel datagram through it) and {@code full}.
     */
    public static final List<String> KERNEL_PATHS = List.of("off", "encap", "gpe_trial", "gpe", "full");

    /** The path peers' kernel datagrams take now, one of {@link #KERNEL_PATHS}. */
    public String kernelPath() {
        return kernel != null ? kernel.path() : "off";
    }

    /**
     * The kernel datapath's counters, indexed by {@code KernelPrograms.COUNT_*}: {@code [encapsulated, decapsulated
     * (with gpe: rewritten for the GPE device), failed halfway (dropped), refused for the GPE port (dropped), delivered
     * by the GPE device's gate]} (a super-packet counts once; -1 where a slot could not be read); all zero without it.
     */
    public long[] kernelPackets() {
        return kernel != null ? kernel.counts() : new long[KernelPath.COUNTERS];
    }

    /**
     * The kernel datapath's counters (a super-packet counts once; -1 where one could not be read; all zero without it).
     *
     * @param encapsulated packets flannel0's egress program sent to peers
     * @param decapsulated peer datagrams the external interface's ingress program decapsulated (with {@code gpe}:
     *                     rewrote for the GPE device)
     * @param failed       packets a program dropped after a rewrite failed halfway
     * @param refused      datagrams dropped for the GPE port: arriving on the external interface addressed to it, or
     *                     reaching the GPE device's gate without our program's mark
     * @param gpeDelivered packets the GPE device's gate handed to flannel0 (against {@code decapsulated}: whether
     *                     the GPE path delivers)
     */
    public record KernelCounts(long encapsulated, long decapsulated, long failed, long refused, long gpeDelivered) {
    }

    /** {@link #kernelPackets()} by name. */
    public KernelCounts kernelCounts() {
        long[] k = kernelPackets();
        return new KernelCounts(k[KernelPrograms.COUNT_ENCAP], k[KernelPrograms.COUNT_DECAP], k[KernelPrograms.COUNT_FAILED],
                k[KernelPrograms.COUNT_REFUSED], k[KernelPrograms.COUNT_GATE]);
    }

    /**
     * Whether the kernel's proof map says the peer at {@code publicIp} is proven (TCP and UDP to it from the kernel):
     * the map itself, as {@code bpftool map dump name jfl_udp_proof} shows it; false without the kernel datapath.
     */
    boolean kernelPeerProven(java.net.Inet4Address publicIp) {
        return kernel != null && kernel.proven(org.jflannel.core.Ip4Net.fromInet(publicIp));
    }

    /** What the decapsulating program counted of the routed peer at {@code publicIp}'s datagrams; null without an entry. */
    ProofEvidence kernelPeerSeen(java.net.Inet4Address publicIp) {
        if (kernel == null) {
            return null;
        }
        for (KernelPath.Routed r : kernel.routedPeerList()) {
            if (r.peer().endpoint().getAddress().equals(publicIp)) {
                return kernel.seen(r.peer());
            }
        }
        return null;
    }

    /** Number of peers the kernel datapath sends to. */
    public int kernelPeers() {
        return kernel != null ? kernel.routedPeers() : 0;
    }

    @Override
    public void reconcile() {
        // no routes or neighbours per peer; flannel0 and its route go with the process (REFERENCE §7), and the
        // kernel datapath's maps are ours alone (not pinned), so nothing else can make them drift
    }

    /** Stops the readers, closes the sockets, then the TUN queues: flannel0 and its route disappear. */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        long[] k = kernelPackets(); // read while the maps are still ours
        closeAll(readers, sockets, queues);
        UdpCounters c = path.counters();
        LOG.info("udp network closed dev={} toPeers={} fromPeers={} groTrains={} coalesced={} tunWrites={} kernelEncap={} kernelDecap={} kernelFailed={}",
                deviceName(), c.packetsToPeers(), c.packetsFromPeers(), c.groTrains(), c.segmentsCoalesced(), c.tunWrites(),
                k[KernelPrograms.COUNT_ENCAP], k[KernelPrograms.COUNT_DECAP], k[KernelPrograms.COUNT_FAILED]);
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
