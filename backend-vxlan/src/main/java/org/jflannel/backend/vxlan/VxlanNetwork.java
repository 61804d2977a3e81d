package org.jflannel.backend.vxlan;

import java.util.List;
import java.util.concurrent.Executor;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseEvent;
import org.jflannel.core.Network;
import org.jflannel.core.peers.PeerLoop;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.NetlinkMonitor;
import org.jflannel.linuxnet.RtNetlink;

/**
 * The registered VXLAN network: the peers' neighbour, FDB and route entries on our VTEP(s), kept by the
 * shared {@link PeerLoop} over this backend's {@link VxlanKernel}. Every method except {@link #close()} and
 * the counters runs on the daemon's {@code lease-events} thread (netlink events and timers hand their work
 * to it through {@link org.jflannel.core.peers.Healing}), so nothing here is locked.
 */
public final class VxlanNetwork implements Network {
    private final Lease own;
    private final int mtu;
    private final RtNetlink nl;
    private final VxlanKernel kernel;
    private final PeerLoop<PeerEntries> loop;
    private final VxlanCounters counters;

    VxlanNetwork(Lease own, int mtu, RtNetlink nl, VtepDevice v4, VtepDevice v6, boolean directRouting,
                 Retry retry, VxlanCounters counters) {
        this.own = own;
        this.mtu = mtu;
        this.nl = nl;
        this.counters = counters;
        this.kernel = new VxlanKernel(nl, v4, v6, directRouting, retry, counters);
        this.loop = new PeerLoop<>("vxlan", own, kernel, counters);
    }

    /** Starts the self-healing: the netlink watch joins the calling thread's network namespace. */
    void startHealing(Executor leaseEvents, VxlanSettings settings) throws NetlinkException {
        loop.heal(leaseEvents, settings.timing(), "vxlan-timer",
                healing -> NetlinkMonitor.start("vxlan-linkwatch", VxlanWatch.GROUPS, new VxlanWatch(kernel, healing)));
    }

    @Override
    public Lease lease() {
        return own;
    }

    @Override
    public int mtu() {
        return mtu;
    }

    public VxlanCounters counters() {
        return counters;
    }

    @Override
    public void apply(List<LeaseEvent> batch) {
        loop.apply(batch);
    }

    /**
     * Ours (REFERENCE §6.10): brings back vanished devices, then re-writes missing or wrong entries
     * and, once the first complete lease list was applied, deletes entries of no current lease.
     */
    @Override
    public void reconcile() {
        loop.reconcile(true);
    }

    /** Number of peers with programmed entries. */
    public int peers() {
        return loop.peers();
    }

    @Override
    public void close() {
        loop.close(); // and its healing: timer and netlink watch
        nl.close(); // devices and entries stay in place (REFERENCE §9.4)
    }
}
