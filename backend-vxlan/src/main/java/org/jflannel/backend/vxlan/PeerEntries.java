package org.jflannel.backend.vxlan;

import java.util.Objects;
import org.jflannel.linuxnet.netlink.FdbEntry;
import org.jflannel.linuxnet.netlink.Neighbour;
import org.jflannel.linuxnet.netlink.Nexthop;
import org.jflannel.linuxnet.netlink.Route;

/** The kernel entries that carry traffic to one peer subnet of one address family. */
sealed interface PeerEntries permits PeerEntries.Encapsulated, PeerEntries.Direct {

    /** The route to the peer's subnet; present in both kinds. */
    Route route();

    default boolean ipv6() {
        return !route().isIpv4();
    }

    /** For logs: {@code subnet=10.244.3.0/24 publicIp=192.0.2.12 vtepMac=0e:...}. */
    default String describe() {
        if (this instanceof Encapsulated v) {
            return "subnet=" + v.route().dst() + " publicIp=" + v.fdb().dst().getHostAddress() + " vtepMac=" + v.fdb().mac();
        }
        return "subnet=" + route().dst() + " publicIp=" + route().gateway().getHostAddress() + " directRouting=true";
    }

    /**
     * VXLAN (REFERENCE §6.7): the neighbour makes the peer's subnet address (the route's gateway)
     * resolve to the peer's VTEP MAC, the FDB entry sends that MAC to the peer's public IP, and the
     * onlink route sends the subnet to that gateway through our device.
     *
     * @param nexthop null: a plain onlink route (upstream's); else (Ours, {@code JFLANNEL_ROUTE_NEXTHOPS}) the
     *                nexthop object the route goes through ({@code route.nexthopId() == nexthop.id()})
     */
    record Encapsulated(Neighbour neighbour, FdbEntry fdb, Route route, Nexthop nexthop) implements PeerEntries {
        public Encapsulated {
            Objects.requireNonNull(neighbour, "neighbour");
            Objects.requireNonNull(fdb, "fdb");
            Objects.requireNonNull(route, "route");
            if ((nexthop == null ? 0 : nexthop.id()) != route.nexthopId()) {
                throw new IllegalArgumentException("route " + route.dst() + ": nhid " + route.nexthopId()
                        + " is not its nexthop's id " + (nexthop == null ? "(none)" : nexthop.id()));
            }
        }

        Encapsulated(Neighbour neighbour, FdbEntry fdb, Route route) {
            this(neighbour, fdb, route, null);
        }
    }

    /** DirectRouting (REFERENCE §6.9): the peer is on our L2, one plain route via its public IP. */
    record Direct(Route route) implements PeerEntries {
        public Direct {
            Objects.requireNonNull(route, "route");
        }
    }
}
