package org.jflannel.backend.hostgw;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseAttrs;
import org.jflannel.linuxnet.netlink.IpPrefix;
import org.jflannel.linuxnet.netlink.Route;

/**
 * Pure: turns a peer lease into its host-gw routes (upstream {@code backend/hostgw}): per family,
 * {@code <peer subnet> via <peer public IP> dev <external interface>}, main table, scope universe,
 * protocol boot, unicast, no flags, which is the route {@code ip route add} would make. The one
 * outside fact, whether a public IP is directly reachable on the external interface, comes in as a
 * predicate so this stays testable.
 */
final class RoutePlanner {
    static final String TYPE = "host-gw";

    /** Either the peer's routes (possibly with refused families) or the reason the lease is ignored. */
    sealed interface Outcome permits Planned, Ignored {}

    record Planned(PeerRoutes peer) implements Outcome {}

    /** Not a host-gw lease (mixed-backend cluster): upstream's warning text. */
    record Ignored(String reason) implements Outcome {}

    private final int link;
    private final boolean v4;
    private final boolean v6;
    private final String linkName;
    private final Predicate<InetAddress> onLink;

    /**
     * @param link      index of the external interface
     * @param v4        IPv4 on in net-conf.json
     * @param v6        IPv6 on in net-conf.json
     * @param onLink    {@code ip route get <ip>} answers with one gateway-less route out of {@code link}
     */
    RoutePlanner(int link, String linkName, boolean v4, boolean v6, Predicate<InetAddress> onLink) {
        this.link = link;
        this.linkName = linkName;
        this.v4 = v4;
        this.v6 = v6;
        this.onLink = onLink;
    }

    /** The route a host-gw peer gets: what upstream's netlink.Route{Dst, Gw, LinkIndex} becomes in the kernel. */
    static Route route(IpPrefix subnet, InetAddress gateway, int link) {
        return new Route(subnet, gateway, link, Route.SCOPE_UNIVERSE, false, Route.TYPE_UNICAST, Route.TABLE_MAIN,
                Route.PROTO_BOOT);
    }

    Outcome plan(Lease lease) {
        LeaseAttrs attrs = lease.attrs();
        if (!TYPE.equals(attrs.backendType())) {
            return new Ignored("Ignoring non-host-gw subnet: type=" + attrs.backendType());
        }
        List<Route> routes = new ArrayList<>(2);
        List<String> refusals = new ArrayList<>(0);
        if (v4 && lease.enableIPv4()) {
            family(new IpPrefix(lease.subnet().inetAddress(), lease.subnet().prefixLength()), attrs.publicIp(),
                    "PublicIP", routes, refusals);
        }
        if (v6 && lease.enableIPv6()) {
            family(new IpPrefix(lease.ipv6Subnet().inetAddress(), lease.ipv6Subnet().prefixLength()), attrs.publicIpv6(),
                    "PublicIPv6", routes, refusals);
        }
        return new Planned(new PeerRoutes(lease, routes, refusals));
    }

    private void family(IpPrefix subnet, InetAddress gateway, String field, List<Route> routes, List<String> refusals) {
        if (gateway == null) {
            refusals.add("subnet=" + subnet + " reason=\"lease has no " + field + "\"");
        } else if (!onLink.test(gateway)) {
            refusals.add("subnet=" + subnet + " via=" + gateway.getHostAddress() + " reason=\"" + field
                    + " not directly reachable on " + linkName + ": host-gw needs every node on one L2 segment\"");
        } else {
            routes.add(route(subnet, gateway, link));
        }
    }
}
