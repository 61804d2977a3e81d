package org.jflannel.backend.udp;

import java.net.Inet4Address;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jflannel.core.Ip4Net;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseEvent;
import org.jflannel.core.peers.LeasePlan;
import org.jflannel.core.peers.LoopCounters;
import org.jflannel.core.peers.OwnTable;
import org.jflannel.core.peers.PeerLoop;
import org.jflannel.core.peers.ReadBack;
import org.jflannel.core.peers.Writing;

/**
 * The peers as lease events describe them (lease-events thread only), kept by the shared {@link PeerLoop}:
 * a lease wants one {@link Peer} (its subnet to its public IP; a changed PublicIP replaces it), a removed
 * lease takes it away. Each batch yields one immutable {@link PeerTable} for the packet paths. A lease we
 * cannot use is logged and skipped. The "kernel" here is our own table: nothing to read back or heal.
 */
final class PeerBook {

    private final Map<Ip4Net, Peer> peers = new LinkedHashMap<>();
    private final PeerLoop<Peer> loop;

    PeerBook(Lease own, int port) {
        this.loop = new PeerLoop<>("udp", own, new Table(port), LoopCounters.NONE);
    }

    /** Applies the batch and returns the table to publish. */
    PeerTable apply(List<LeaseEvent> batch) {
        loop.apply(batch);
        return PeerTable.of(peers.values());
    }

    int size() {
        return peers.size();
    }

    /** The peers now (a copy). */
    List<Peer> peers() {
        return List.copyOf(peers.values());
    }

    /** The loop's kernel side: the peer map, ours alone (nothing to read back). */
    private final class Table implements OwnTable<Peer> {
        private final int port;

        Table(int port) {
            this.port = port;
        }

        @Override
        public LeasePlan<Peer> plan(Lease lease) {
            Ip4Net subnet = lease.subnet();
            Inet4Address publicIp = lease.attrs().publicIp();
            if (subnet == null || publicIp == null) {
                return LeasePlan.ignored("lease skipped: udp needs an IPv4 subnet and a PublicIP");
            }
            boolean decap = UdpBackendData.kernelDecap(lease.attrs().backendData());
            return LeasePlan.of(lease, List.of(Peer.of(subnet, publicIp, port, decap)));
        }

        /** A removal names the subnet: whatever peer we hold for it goes. */
        @Override
        public List<Peer> forgotten(Lease lease) {
            Peer p = lease.subnet() == null ? null : peers.get(lease.subnet());
            return p == null ? List.of() : List.of(p);
        }

        @Override
        public String describe(Peer p) {
            return "subnet=" + p.subnet() + " publicIp=" + p.endpoint().getAddress().getHostAddress()
                    + " port=" + p.endpoint().getPort() + " kernelDecap=" + p.kernelDecap();
        }

        @Override
        public List<Peer> write(List<Peer> entries, Writing<Peer> how) {
            entries.forEach(p -> peers.put(p.subnet(), p));
            return List.of();
        }

        @Override
        public boolean repair(ReadBack.Missing<Peer> missing, boolean failedBefore) {
            peers.put(missing.entry().subnet(), missing.entry());
            return true;
        }

        @Override
        public void delete(Peer p) {
            peers.remove(p.subnet(), p);
        }
    }
}
