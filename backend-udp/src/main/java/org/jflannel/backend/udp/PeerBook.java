package org.jflannel.backend.udp;

import java.net.Inet4Address;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jflannel.core.Ip4Net;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseEvent;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The peers as lease events describe them (lease-events thread only): Added sets the entry of the
 * lease's subnet (a changed PublicIP replaces it), Removed deletes it. Each batch yields one
 * immutable {@link PeerTable} for the packet paths. A lease we cannot use is logged and skipped.
 */
final class PeerBook {
    private static final Logger LOG = LoggerFactory.getLogger(PeerBook.class);
    /** From this many events in one batch on, per-peer lines go to DEBUG and one summary line to INFO. */
    static final int BULK_MIN = 8;

    private final Lease own;
    private final int port;
    private final Map<Ip4Net, Peer> peers = new LinkedHashMap<>();

    PeerBook(Lease own, int port) {
        this.own = own;
        this.port = port;
    }

    /** Applies the batch and returns the table to publish. */
    PeerTable apply(List<LeaseEvent> batch) {
        boolean bulk = batch.size() >= BULK_MIN;
        int added = 0;
        int removed = 0;
        for (LeaseEvent e : batch) {
            try {
                if (e.type() == LeaseEvent.Type.ADDED) {
                    added += added(e.lease(), bulk) ? 1 : 0;
                } else {
                    removed += removed(e.lease(), bulk) ? 1 : 0;
                }
            } catch (RuntimeException ex) {
                LOG.error("lease skipped lease={} error={}", e.lease().key(), ex.toString());
            }
        }
        if (bulk) {
            LOG.info("leases applied events={} added={} removed={} peers={}", batch.size(), added, removed, peers.size());
        }
        return PeerTable.of(peers.values());
    }

    private boolean added(Lease lease, boolean bulk) {
        if (lease.sameSubnets(own)) {
            return false;
        }
        Ip4Net subnet = lease.subnet();
        Inet4Address publicIp = lease.attrs().publicIp();
        if (subnet == null || publicIp == null) {
            LOG.warn("lease skipped: udp needs an IPv4 subnet and a PublicIP lease={}", lease);
            return false;
        }
        boolean decap = UdpBackendData.kernelDecap(lease.attrs().backendData());
        Peer peer = Peer.of(subnet, publicIp, port, decap);
        Peer old = peers.put(subnet, peer);
        if (peer.equals(old)) {
            return false;
        }
        log(bulk, "lease added subnet={} publicIp={} port={} kernelDecap={}", subnet, publicIp.getHostAddress(), port, decap);
        return true;
    }

    private boolean removed(Lease lease, boolean bulk) {
        if (lease.subnet() == null || peers.remove(lease.subnet()) == null) {
            return false;
        }
        log(bulk, "lease removed subnet={}", lease.subnet());
        return true;
    }

    private static void log(boolean bulk, String format, Object... args) {
        if (bulk) {
            LOG.debug(format, args);
        } else {
            LOG.info(format, args);
        }
    }

    int size() {
        return peers.size();
    }

    /** The peers now (a copy). */
    List<Peer> peers() {
        return List.copyOf(peers.values());
    }
}
