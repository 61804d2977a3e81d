package org.jflannel.backend.hostgw;

import java.util.concurrent.Executor;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseEvent;
import org.jflannel.core.Network;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.netlink.Address;
import org.jflannel.linuxnet.netlink.IpPrefix;
import org.jflannel.linuxnet.netlink.Link;
import org.jflannel.linuxnet.netlink.Route;
import org.jflannel.linuxnet.netlink.RtNetlink;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.jflannel.core.peers.PeerNetwork;
import org.jflannel.linuxnet.netlink.NetlinkMonitor;

/**
 * The registered host-gw network: one main-table route per peer subnet via the peer's public IP out
 * of the external interface, kept by the shared {@link org.jflannel.core.peers.PeerLoop} over this backend's
 * {@link HostGwKernel}. Its MTU is the external interface's: no encapsulation (upstream
 * {@code Mtu: extIface.Iface.MTU}). Every method except {@link #close()} and the counters runs on the daemon's
 * {@code lease-events} thread (netlink events and the timer hand their work to it through
 * {@link org.jflannel.core.peers.Healing}), so nothing here is locked.
 */
public final class HostGwNetwork extends PeerNetwork<Route> {

    private final HostGwKernel kernel;
    private final HostGwCounters counters;

    HostGwNetwork(Lease own, int mtu, RtNetlink nl, HostGwCounters counters, String extName, int link,
                  IpPrefix network, IpPrefix ipv6Network) {
        this(own, mtu, nl, counters, new HostGwKernel(own, nl, extName, link, network, ipv6Network, counters));
    }

    private HostGwNetwork(Lease own, int mtu, RtNetlink nl, HostGwCounters counters, HostGwKernel kernel) {
        super("host-gw", own, mtu, kernel, counters, nl);
        this.kernel = kernel;
        this.counters = counters;
    }

    /** Starts the self-healing: the netlink watch joins the calling thread's network namespace. */
    void startHealing(Executor leaseEvents, HostGwSettings settings) throws NetlinkException {
        loop.heal(leaseEvents, settings.timing(), "hostgw-timer",
                healing -> NetlinkMonitor.start("hostgw-watch", HostGwWatch.GROUPS, new HostGwWatch(kernel, healing)));
    }

    public HostGwCounters counters() {
        return counters;
    }
}
