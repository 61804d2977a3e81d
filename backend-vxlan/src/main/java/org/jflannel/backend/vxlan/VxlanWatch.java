package org.jflannel.backend.vxlan;

import java.util.EnumSet;
import java.util.Set;
import java.util.function.Consumer;
import org.jflannel.core.peers.Healing;
import org.jflannel.linuxnet.netlink.NetlinkEvent;
import org.jflannel.linuxnet.netlink.NetlinkMonitor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ours (REFERENCE §6.10): which netlink events matter to the VXLAN backend, on the {@code vxlan-linkwatch}
 * thread: our VTEP deleted (re-create it now), our VTEP down or one of its addresses, neighbours, FDB
 * entries or routes deleted (a debounced pass). {@link Healing} decides when and hands the passes to
 * the lease-events thread. Decides cheaply, never touches the kernel.
 */
final class VxlanWatch implements Consumer<NetlinkEvent> {
    private static final Logger LOG = LoggerFactory.getLogger(VxlanWatch.class);
    static final Set<NetlinkMonitor.Group> GROUPS = EnumSet.of(NetlinkMonitor.Group.LINK, NetlinkMonitor.Group.ADDRESS,
            NetlinkMonitor.Group.NEIGHBOUR, NetlinkMonitor.Group.IPV4_ROUTE, NetlinkMonitor.Group.IPV6_ROUTE);

    private final VxlanKernel kernel;
    private final Healing healing;

    VxlanWatch(VxlanKernel kernel, Healing healing) {
        this.kernel = kernel;
        this.healing = healing;
    }

    @Override
    public void accept(NetlinkEvent event) {
        if (event instanceof NetlinkEvent.LinkEvent le) {
            boolean ours = kernel.ours(le.link().name(), le.link().index());
            if (ours) {
                kernel.spoilAhead();
            }
            if (ours && le.deleted()) {
                LOG.warn("vxlan device deleted name={} index={}", le.link().name(), le.link().index());
                healing.deviceGone();
            } else if (ours && !le.link().up()) {
                healing.reconcileSoon(false);
            }
            return;
        }
        if (kernel.ours(linkOf(event))) {
            kernel.spoilAhead(); // any change to our entries, not only a deletion: the dump ahead no longer shows the kernel
            if (event.deleted()) {
                healing.reconcileSoon(false);
            }
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
}
