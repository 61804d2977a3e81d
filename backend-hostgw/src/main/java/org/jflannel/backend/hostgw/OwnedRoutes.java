package org.jflannel.backend.hostgw;

import java.util.List;
import java.util.Set;
import java.util.function.Predicate;
import org.jflannel.linuxnet.netlink.IpPrefix;
import org.jflannel.linuxnet.netlink.Route;

/**
 * Pure: which routes of the main table host-gw may call its own when no lease wants them (a stray,
 * left by a peer that vanished while the daemon was down; issue #2554). Only a route that looks
 * exactly like one we write qualifies: unicast, main table, protocol boot (not the kernel's, not a
 * routing daemon's or a static one), no onlink flag,
 * out of the external interface, destination strictly inside the flannel Network (or IPv6Network)
 * and not our own subnet, gateway on one of the interface's connected prefixes (a peer's address
 * on the segment). A default route, a route to the whole Network, a route via a router elsewhere
 * or through another device is never touched.
 *
 * @param segment  the connected prefixes of the external interface's addresses
 * @param own      our own lease's subnets (never ours to delete: the blackhole route lives there)
 */
record OwnedRoutes(int link, IpPrefix network, IpPrefix ipv6Network, List<IpPrefix> segment, Set<IpPrefix> own)
        implements Predicate<Route> {
    static final int RTPROT_KERNEL = 2;

    OwnedRoutes {
        segment = List.copyOf(segment);
        own = Set.copyOf(own);
    }

    @Override
    public boolean test(Route r) {
        if (r.dst() == null || r.gateway() == null || r.linkIndex() != link || r.onlink()
                || r.table() != Route.TABLE_MAIN || r.type() != Route.TYPE_UNICAST || r.protocol() != Route.PROTO_BOOT
                || own.contains(r.dst())) {
            return false;
        }
        IpPrefix net = r.isIpv4() ? network : ipv6Network;
        return net != null && net.strictlyContains(r.dst())
                && segment.stream().anyMatch(p -> p.contains(r.gateway()));
    }
}
