package org.jflannel.backend.vxlan;

import java.util.EnumSet;
import org.jflannel.core.peers.Healing;
import org.jflannel.linuxnet.NetlinkEvent;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.NetlinkMonitor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ours (REFERENCE §6.10): which netlink events matter to the VXLAN backend, on the {@code vxlan-linkwatch}
 * thread: our VTEP deleted (re-create it now), our VTEP down or one of its addresses, neighbours, FDB
 * entries or routes deleted (a debounced pass). {@link Healing} decides when and hands the passes to
 * the lease-events thread.
 */
final class VxlanWatch implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(VxlanWatch.class);

    private final VxlanKernel kernel;
    private final Healing healing;
    private NetlinkMonitor monitor;

    private VxlanWatch(VxlanKernel kernel, Healing healing) {
        this.kernel = kernel;
        this.healing = healing;
    }

    /** Starts watching; the netlink socket joins the calling thread's network namespace. */
    static VxlanWatch start(VxlanKernel kernel, Healing healing) throws NetlinkException {
        VxlanWatch w = new VxlanWatch(kernel, healing);
        w.monitor = NetlinkMonitor.start("vxlan-linkwatch", EnumSet.of(NetlinkMonitor.Group.LINK,
                NetlinkMonitor.Group.ADDRESS, NetlinkMonitor.Group.NEIGHBOUR, NetlinkMonitor.Group.IPV4_ROUTE,
                NetlinkMonitor.Group.IPV6_ROUTE), w::onEvent);
        healing.start();
        return w;
    }

    /** Runs on vxlan-linkwatch: decide cheaply whether the event concerns us, never touch the kernel here. */
    private void onEvent(NetlinkEvent event) {
        if (event instanceof NetlinkEvent.LinkEvent le) {
            boolean ours = kernel.ours(le.link().name(), le.link().index());
            if (ours && le.deleted()) {
                LOG.warn("vxlan device deleted name={} index={}", le.link().name(), le.link().index());
                healing.deviceGone();
            } else if (ours && !le.link().up()) {
                healing.reconcileSoon(false);
            }
            return;
        }
        if (event.deleted() && kernel.ours(linkOf(event))) {
            healing.reconcileSoon(false);
        }
    }

    private static int linkOf(NetlinkEvent event) {
        if (event instanceof NetlinkEvent.AddressEvent a) {
            return a.address().linkIndex();
        } else if (event instanceof NetlinkEvent.RouteEvent r) {
            return r.route().linkIndex();
        } else if (event instanceof NetlinkEvent.NeighbourEvent n) {
            return n.neighbour().linkIndex();
        } else if (event instanceof NetlinkEvent.FdbEvent f) {
            return f.entry().linkIndex();
        }
        return 0;
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
