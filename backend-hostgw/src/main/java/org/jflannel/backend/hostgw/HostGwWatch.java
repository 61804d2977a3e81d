package org.jflannel.backend.hostgw;

import java.util.EnumSet;
import org.jflannel.core.peers.Healing;
import org.jflannel.linuxnet.NetlinkEvent;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.NetlinkMonitor;

/**
 * Ours (REFERENCE §6.10): which netlink events matter to host-gw, on the {@code hostgw-watch} thread: the
 * external interface changing (down, up, deleted, re-created) or its addresses (refused peers may be
 * reachable now) make a full pass, one of its routes deleted a partial one. {@link Healing} decides when
 * and hands the passes to the lease-events thread (upstream re-adds missing routes every 10 s too).
 */
final class HostGwWatch implements AutoCloseable {

    private final HostGwKernel kernel;
    private final Healing healing;
    private NetlinkMonitor monitor;

    private HostGwWatch(HostGwKernel kernel, Healing healing) {
        this.kernel = kernel;
        this.healing = healing;
    }

    /** Starts watching; the netlink socket joins the calling thread's network namespace. */
    static HostGwWatch start(HostGwKernel kernel, Healing healing) throws NetlinkException {
        HostGwWatch w = new HostGwWatch(kernel, healing);
        w.monitor = NetlinkMonitor.start("hostgw-watch", EnumSet.of(NetlinkMonitor.Group.LINK,
                NetlinkMonitor.Group.ADDRESS, NetlinkMonitor.Group.IPV4_ROUTE, NetlinkMonitor.Group.IPV6_ROUTE), w::onEvent);
        healing.start();
        return w;
    }

    /**
     * Runs on hostgw-watch: decide cheaply whether the event concerns us, never touch the kernel here. A
     * route deletion alone does not retry failed routes (our own deletions are events too); a link or
     * address change does, since it can make a failed route possible.
     */
    private void onEvent(NetlinkEvent event) {
        int link = kernel.link();
        if (event instanceof NetlinkEvent.LinkEvent le) {
            if (le.link().index() == link || le.link().name().equals(kernel.extName())) {
                healing.reconcileSoon(true); // down, up, deleted or re-created: routes via a gateway go and come with it
            }
        } else if (event instanceof NetlinkEvent.AddressEvent a) {
            if (a.address().linkIndex() == link) {
                healing.reconcileSoon(true); // the segment changed: refused peers may be reachable now
            }
        } else if (event instanceof NetlinkEvent.RouteEvent r) {
            if (r.deleted() && r.route().linkIndex() == link) {
                healing.reconcileSoon(false);
            }
        }
    }

    /** Stops the timer, then the netlink watch. */
    @Override
    public void close() {
        healing.close();
        if (monitor != null) {
            monitor.close();
        }
    }
}
