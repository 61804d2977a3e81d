package org.jflannel.backend.hostgw;

import java.util.EnumSet;
import java.util.Set;
import java.util.function.Consumer;
import org.jflannel.core.peers.Healing;
import org.jflannel.linuxnet.netlink.NetlinkEvent;
import org.jflannel.linuxnet.netlink.NetlinkMonitor;

/**
 * Ours (REFERENCE §6.10): which netlink events matter to host-gw, on the {@code hostgw-watch} thread: the
 * external interface changing (down, up, deleted, re-created) or its addresses (refused peers may be
 * reachable now) make a full pass, one of its routes deleted a partial one: a route deletion alone does
 * not retry failed routes (our own deletions are events too). {@link Healing} decides when and hands the
 * passes to the lease-events thread (upstream re-adds missing routes every 10 s too). Decides cheaply,
 * never touches the kernel.
 */
final class HostGwWatch implements Consumer<NetlinkEvent> {
    static final Set<NetlinkMonitor.Group> GROUPS = EnumSet.of(NetlinkMonitor.Group.LINK, NetlinkMonitor.Group.ADDRESS,
            NetlinkMonitor.Group.IPV4_ROUTE, NetlinkMonitor.Group.IPV6_ROUTE);

    private final HostGwKernel kernel;
    private final Healing healing;

    HostGwWatch(HostGwKernel kernel, Healing healing) {
        this.kernel = kernel;
        this.healing = healing;
    }

    @Override
    public void accept(NetlinkEvent event) {
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
}
