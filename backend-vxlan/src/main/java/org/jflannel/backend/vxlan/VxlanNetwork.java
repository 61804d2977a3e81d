package org.jflannel.backend.vxlan;

import java.util.concurrent.Executor;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseEvent;
import org.jflannel.core.Network;
import org.jflannel.linuxnet.netlink.Route;
import org.jflannel.linuxnet.netlink.RtNetlink;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.jflannel.core.peers.PeerNetwork;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.netlink.NetlinkMonitor;

/**
 * The registered VXLAN network: the peers' neighbour, FDB and route entries on our VTEP(s), kept by the
 * shared {@link org.jflannel.core.peers.PeerLoop} over this backend's {@link VxlanKernel}. Every method except
 * {@link #close()} and the counters runs on the daemon's {@code lease-events} thread (netlink events and
 * timers hand their work to it through {@link org.jflannel.core.peers.Healing}), so nothing here is locked.
 */
public final class VxlanNetwork extends PeerNetwork<PeerEntries> {

    private final VxlanKernel kernel;
    private final VxlanCounters counters;

    VxlanNetwork(Lease own, int mtu, RtNetlink nl, VtepDevice v4, VtepDevice v6, boolean directRouting,
                 boolean nexthops, Retry retry, VxlanCounters counters) {
        this(own, mtu, nl, new VxlanKernel(nl, v4, v6, directRouting, nexthops, retry, counters), counters);
    }

    private VxlanNetwork(Lease own, int mtu, RtNetlink nl, VxlanKernel kernel, VxlanCounters counters) {
        super("vxlan", own, mtu, kernel, counters, nl);
        this.kernel = kernel;
        this.counters = counters;
    }

    /** Starts the self-healing: the netlink watch joins the calling thread's network namespace. */
    void startHealing(Executor leaseEvents, VxlanSettings settings) throws NetlinkException {
        loop.heal(leaseEvents, settings.timing(), "vxlan-timer",
                healing -> NetlinkMonitor.start("vxlan-linkwatch", VxlanWatch.GROUPS, new VxlanWatch(kernel, healing)));
        kernel.dumpAhead(); // after the watch subscribed: a deletion from now on spoils it (issue 23)
    }

    /** Whether a deletion seen by the netlink watch spoilt the tables dumped ahead of the first batch (tests). */
    boolean dumpAheadSpoilt() {
        return kernel.aheadSpoilt();
    }

    /** Whether the tables dumped ahead of the first batch are there, not yet taken (tests). */
    boolean dumpedAhead() {
        return kernel.aheadDumped();
    }

    public VxlanCounters counters() {
        return counters;
    }
}
