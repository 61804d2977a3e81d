package org.jflannel.backend.hostgw;

import java.util.List;
import java.util.concurrent.Executor;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseEvent;
import org.jflannel.core.Network;
import org.jflannel.core.peers.PeerLoop;
import org.jflannel.linuxnet.IpPrefix;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.NetlinkMonitor;
import org.jflannel.linuxnet.Route;
import org.jflannel.linuxnet.RtNetlink;

/**
 * The registered host-gw network: one main-table route per peer subnet via the peer's public IP out
 * of the external interface, kept by the shared {@link PeerLoop} over this backend's {@link HostGwKernel}.
 * Every method except {@link #close()} and the counters runs on the daemon's {@code lease-events} thread
 * (netlink events and the timer hand their work to it through {@link org.jflannel.core.peers.Healing}), so nothing here is locked.
 */
public final class HostGwNetwork implements Network {

    private final Lease own;
    private final int mtu;
    private final RtNetlink nl;
    private final HostGwCounters counters = new HostGwCounters();
    private final HostGwKernel kernel;
    private final PeerLoop<Route> loop;

    HostGwNetwork(Lease own, int mtu, RtNetlink nl, String extName, int link, IpPrefix network, IpPrefix ipv6Network) {
        this.own = own;
        this.mtu = mtu;
        this.nl = nl;
        this.kernel = new HostGwKernel(own, nl, extName, link, network, ipv6Network, counters);
        this.loop = new PeerLoop<>("host-gw", own, kernel, counters);
    }

    /** Starts the self-healing: the netlink watch joins the calling thread's network namespace. */
    void startHealing(Executor leaseEvents, HostGwSettings settings) throws NetlinkException {
        loop.heal(leaseEvents, settings.timing(), "hostgw-timer",
                healing -> NetlinkMonitor.start("hostgw-watch", HostGwWatch.GROUPS, new HostGwWatch(kernel, healing)));
    }

    @Override
    public Lease lease() {
        return own;
    }

    /** The external interface's MTU: no encapsulation (upstream {@code Mtu: extIface.Iface.MTU}). */
    @Override
    public int mtu() {
        return mtu;
    }

    public HostGwCounters counters() {
        return counters;
    }

    /** Number of peers with at least one route planned. */
    public int peers() {
        return loop.peers();
    }

    @Override
    public void apply(List<LeaseEvent> batch) {
        loop.apply(batch);
    }

    /**
     * Ours (REFERENCE §6.10): re-writes missing or wrong routes, re-checks refused peers and, once the
     * first complete lease list was applied, deletes routes of no current lease.
     */
    @Override
    public void reconcile() {
        loop.reconcile(true);
    }

    @Override
    public void close() {
        loop.close(); // and its healing: timer and netlink watch
        nl.close(); // routes stay in place (REFERENCE §9.4)
    }
}
