package org.jflannel.backend.ipip;

import java.util.EnumSet;
import java.util.Set;
import java.util.function.Consumer;
import org.jflannel.core.peers.Healing;
import org.jflannel.linuxnet.netlink.NetlinkEvent;
import org.jflannel.linuxnet.netlink.NetlinkMonitor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Which netlink events matter to ipip, on the {@code ipip-watch} thread: {@code flannel.ipip} deleted
 * (re-created at once, every peer replayed), down or its address gone, a route through it deleted (a
 * partial pass); the external interface changing or its addresses (DirectRouting's choice may change: a
 * full pass), a route out of it deleted (DirectRouting routes). {@link Healing} decides when and hands the
 * passes to the lease-events thread. Decides cheaply, never touches the kernel.
 */
final class IpipWatch implements Consumer<NetlinkEvent> {
    private static final Logger LOG = LoggerFactory.getLogger(IpipWatch.class);
    static final Set<NetlinkMonitor.Group> GROUPS = EnumSet.of(NetlinkMonitor.Group.LINK, NetlinkMonitor.Group.ADDRESS,
            NetlinkMonitor.Group.IPV4_ROUTE);

    private final IpipKernel kernel;
    private final Healing healing;

    IpipWatch(IpipKernel kernel, Healing healing) {
        this.kernel = kernel;
        this.healing = healing;
    }

    @Override
    public void accept(NetlinkEvent event) {
        if (event instanceof NetlinkEvent.LinkEvent le) {
            String name = le.link().name();
            int index = le.link().index();
            if (kernel.ours(name, index)) {
                if (le.deleted()) {
                    LOG.warn("ipip device deleted name={} index={}", name, index);
                    healing.deviceGone();
                } else if (!le.link().up() || index != kernel.tunnel()) {
                    healing.reconcileSoon(true);
                }
            } else if (kernel.external(name, index)) {
                healing.reconcileSoon(true);
            }
        } else if (event instanceof NetlinkEvent.AddressEvent a) {
            int link = a.address().linkIndex();
            if (link == kernel.tunnel() && a.deleted()) {
                healing.reconcileSoon(false);
            } else if (link == kernel.ext()) {
                healing.reconcileSoon(true);
            }
        } else if (event instanceof NetlinkEvent.RouteEvent r) {
            int link = r.route().linkIndex();
            if (r.deleted() && (link == kernel.tunnel() || link == kernel.ext())) {
                healing.reconcileSoon(false);
            }
        }
    }
}
