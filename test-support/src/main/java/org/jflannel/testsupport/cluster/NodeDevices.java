package org.jflannel.testsupport.cluster;

import java.util.List;
import java.util.Optional;
import org.jflannel.linuxnet.netlink.Link;
import org.jflannel.linuxnet.netlink.RtNetlink;
import org.jflannel.linuxnet.netns.NetNs;

/**
 * A node's flannel devices and their kernel entries, dumped through rtnetlink inside the node's
 * namespace now, whoever programmed them (our daemon from the build or the image, or upstream's).
 * A device that is not there reads as {@link FlannelEntries#absent()}.
 */
final class NodeDevices {
    private final NetNs ns;

    NodeDevices(NetNs ns) {
        this.ns = ns;
    }

    /** {@code flannel.1} and its neighbours, FDB entries and main-table routes. */
    FlannelEntries vxlan() throws Exception {
        return vxlan(ClusterNode.VXLAN_DEVICE);
    }

    /** VXLAN device {@code name} ({@code flannel.1}, {@code flannel-v6.1}) and its neighbours, FDB entries and main-table routes. */
    FlannelEntries vxlan(String name) throws Exception {
        return ns.call(() -> {
            try (RtNetlink nl = RtNetlink.open()) {
                Optional<Link> link = nl.link(name);
                if (link.isEmpty()) {
                    return FlannelEntries.absent();
                }
                int i = link.get().index();
                return new FlannelEntries(link.get(), nl.neighbours(i), nl.fdb(i), nl.routesOf(i));
            }
        });
    }

    /**
     * Device {@code name} and its main-table routes only: a TUN ({@code flannel0}, {@code flannel-wg})
     * or host-gw's underlay interface, where flannel writes neither neighbours nor FDB entries.
     */
    FlannelEntries routesOf(String name) throws Exception {
        return ns.call(() -> {
            try (RtNetlink nl = RtNetlink.open()) {
                Optional<Link> link = nl.link(name);
                return link.isEmpty() ? FlannelEntries.absent()
                        : new FlannelEntries(link.get(), List.of(), List.of(), nl.routesOf(link.get().index()));
            }
        });
    }
}
