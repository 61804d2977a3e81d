package org.jflannel.backend.ipip;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.util.List;
import java.util.function.Predicate;
import org.jflannel.core.Lease;
import org.jflannel.core.peers.LeasePlan;
import org.jflannel.linuxnet.netlink.IpPrefix;
import org.jflannel.linuxnet.netlink.Route;

/**
 * Pure: turns a peer lease into its one ipip route (upstream {@code backend/ipip}'s {@code GetRoute}):
 * {@code <peer subnet> via <peer public IP> dev flannel.ipip onlink}, main table, scope universe,
 * protocol boot, unicast; the tunnel takes the gateway as the outer destination. With
 * {@code DirectRouting} and the peer's public IP directly reachable (upstream's
 * {@code ip.DirectRouting}: {@code ip route get} answers with one gateway-less route), the same route
 * on the external interface instead, onlink flag kept as upstream keeps it. The reachability test
 * comes in as a predicate so this stays testable.
 */
final class IpipRoutes {
    static final String TYPE = "ipip";

    private final int tunnel;
    private final int ext;
    private final boolean directRouting;
    private final Predicate<InetAddress> onLink;

    /**
     * @param tunnel        index of {@code flannel.ipip}
     * @param ext           index of the external interface
     * @param onLink        whether a public IP is directly reachable (asked only with {@code directRouting})
     */
    IpipRoutes(int tunnel, int ext, boolean directRouting, Predicate<InetAddress> onLink) {
        this.tunnel = tunnel;
        this.ext = ext;
        this.directRouting = directRouting;
        this.onLink = onLink;
    }

    static Route route(IpPrefix subnet, InetAddress gateway, int link) {
        return Route.onlink(subnet, gateway, link);
    }

    LeasePlan<Route> plan(Lease lease) {
        if (!TYPE.equals(lease.attrs().backendType())) {
            return LeasePlan.ignored("Ignoring non-ipip subnet: type=" + lease.attrs().backendType());
        }
        if (lease.subnet() == null) {
            return LeasePlan.skipped("lease has no IPv4 subnet (ipip is IPv4 only)");
        }
        Inet4Address gw = lease.attrs().publicIp();
        if (gw == null) {
            return LeasePlan.skipped("lease has no PublicIP");
        }
        IpPrefix subnet = new IpPrefix(lease.subnet().inetAddress(), lease.subnet().prefixLength());
        boolean direct = directRouting && onLink.test(gw);
        return new LeasePlan.Planned<>(lease, List.of(route(subnet, gw, direct ? ext : tunnel)), List.of());
    }

    /** For logs: {@code subnet=10.244.3.0/24 via=192.0.2.12}. */
    static String describe(Route r) {
        return "subnet=" + r.dst() + " via=" + r.gateway().getHostAddress();
    }
}
