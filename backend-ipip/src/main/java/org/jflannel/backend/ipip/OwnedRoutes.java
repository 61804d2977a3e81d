package org.jflannel.backend.ipip;

import java.util.function.Predicate;
import org.jflannel.linuxnet.netlink.IpPrefix;
import org.jflannel.linuxnet.netlink.Route;

/**
 * Pure: which main-table routes ipip may call its own when no lease wants them (a stray, left by a peer
 * that vanished while the daemon was down). Only a route that looks exactly like one we write: unicast,
 * main table, protocol boot, onlink, with a gateway, destination strictly inside the flannel Network and
 * not our own subnet, through {@code flannel.ipip}, or (DirectRouting) out of the external interface.
 * A route to the whole Network, a default route, or one another daemon wrote is never touched.
 */
record OwnedRoutes(int tunnel, int ext, boolean directRouting, IpPrefix network, IpPrefix own) implements Predicate<Route> {

    @Override
    public boolean test(Route r) {
        if (r.dst() == null || r.gateway() == null || !r.onlink() || !r.isIpv4() || r.table() != Route.TABLE_MAIN
                || r.type() != Route.TYPE_UNICAST || r.protocol() != Route.PROTO_BOOT || r.dst().equals(own)) {
            return false;
        }
        boolean dev = r.linkIndex() == tunnel || (directRouting && r.linkIndex() == ext);
        return dev && network.strictlyContains(r.dst());
    }
}
