package org.jflannel.backend.ipip;

import java.util.concurrent.Executor;
import org.jflannel.core.Lease;
import org.jflannel.core.peers.PeerNetwork;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.netlink.NetlinkMonitor;
import org.jflannel.linuxnet.netlink.Route;
import org.jflannel.linuxnet.netlink.RtNetlink;

/**
 * The registered ipip network: {@code flannel.ipip} and one main-table route per peer subnet, kept by the
 * shared {@link org.jflannel.core.peers.PeerLoop} over {@link IpipKernel}. Its MTU is the external
 * interface's − 20 (upstream: {@code n.Mtu = link.MTU}, set to that). Every method except {@link #close()}
 * and the counters runs on the daemon's {@code lease-events} thread.
 */
public final class IpipNetwork extends PeerNetwork<Route> {

    private final IpipKernel kernel;
    private final IpipCounters counters;

    IpipNetwork(Lease own, int mtu, RtNetlink nl, IpipCounters counters, IpipKernel kernel) {
        super("ipip", own, mtu, kernel, counters, nl);
        this.kernel = kernel;
        this.counters = counters;
    }

    /** Starts the self-healing: the netlink watch joins the calling thread's network namespace. */
    void startHealing(Executor leaseEvents, IpipSettings settings) throws NetlinkException {
        loop.heal(leaseEvents, settings.timing(), "ipip-timer",
                healing -> NetlinkMonitor.start("ipip-watch", IpipWatch.GROUPS, new IpipWatch(kernel, healing)));
    }

    public IpipCounters counters() {
        return counters;
    }

    /** The tunnel device's name, for the prober and logs. */
    public String device() {
        return DeviceCheck.NAME;
    }
}
