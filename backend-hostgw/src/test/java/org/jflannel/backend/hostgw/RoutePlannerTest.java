package org.jflannel.backend.hostgw;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.util.Set;
import org.jflannel.linuxnet.netlink.IpPrefix;
import org.jflannel.linuxnet.netlink.Route;
import org.junit.jupiter.api.Test;

class RoutePlannerTest {
    static final int ETH0 = 7;
    /** Our L2 segment: 192.0.2.0/24 and 2001:db8:1::/64. */
    static final Set<InetAddress> SEGMENT = Set.of(Leases.ip("192.0.2.12"), Leases.ip("192.0.2.13"),
            Leases.ip("2001:db8:1::12"), Leases.ip("2001:db8:1::13"));

    static RoutePlanner planner(boolean v4, boolean v6) {
        return new RoutePlanner(ETH0, "eth0", v4, v6, SEGMENT::contains);
    }

    static PeerRoutes planned(RoutePlanner p, org.jflannel.core.Lease lease) {
        return ((RoutePlanner.Planned) p.plan(lease)).peer();
    }

    @Test
    void v4LeaseGivesOneRouteViaThePublicIpOnTheExternalInterfaceAsUpstreamWritesIt() {
        PeerRoutes peer = planned(planner(true, false), Leases.v4("10.244.3.0/24", "192.0.2.13"));

        assertThat(peer.refusals()).isEmpty();
        assertThat(peer.routes()).containsExactly(new Route(IpPrefix.parse("10.244.3.0/24"), Leases.ip("192.0.2.13"),
                ETH0, Route.SCOPE_UNIVERSE, false, Route.TYPE_UNICAST, Route.TABLE_MAIN, Route.PROTO_BOOT));
    }

    @Test
    void v6LeaseGivesOneRouteViaThePublicIpv6() {
        PeerRoutes peer = planned(planner(false, true), Leases.v6("2001:db8:42:3::/64", "2001:db8:1::13"));

        assertThat(peer.routes()).singleElement().satisfies(r -> {
            assertThat(r.dst()).isEqualTo(IpPrefix.parse("2001:db8:42:3::/64"));
            assertThat(r.gateway()).isEqualTo(Leases.ip("2001:db8:1::13"));
            assertThat(r.linkIndex()).isEqualTo(ETH0);
            assertThat(r.onlink()).isFalse();
        });
    }

    @Test
    void dualStackLeaseGivesOneRoutePerFamily() {
        PeerRoutes peer = planned(planner(true, true),
                Leases.dual("10.244.3.0/24", "192.0.2.13", "2001:db8:42:3::/64", "2001:db8:1::13"));

        assertThat(peer.routes()).containsExactly(
                RoutePlanner.route(IpPrefix.parse("10.244.3.0/24"), Leases.ip("192.0.2.13"), ETH0),
                RoutePlanner.route(IpPrefix.parse("2001:db8:42:3::/64"), Leases.ip("2001:db8:1::13"), ETH0));
    }

    @Test
    void familiesWeDoNotRunAreLeftOut() {
        var lease = Leases.dual("10.244.3.0/24", "192.0.2.13", "2001:db8:42:3::/64", "2001:db8:1::13");

        assertThat(planned(planner(true, false), lease).routes()).extracting(Route::isIpv4).containsExactly(true);
        assertThat(planned(planner(false, true), lease).routes()).extracting(Route::isIpv4).containsExactly(false);
    }

    @Test
    void peerNotOnOurSegmentIsRefusedWithAReasonAndGetsNoRoute() {
        PeerRoutes peer = planned(planner(true, false), Leases.v4("10.244.9.0/24", "198.51.100.7"));

        assertThat(peer.routes()).isEmpty();
        assertThat(peer.refusals()).containsExactly("subnet=10.244.9.0/24 via=198.51.100.7 reason=\"PublicIP not directly "
                + "reachable on eth0: host-gw needs every node on one L2 segment\"");
    }

    @Test
    void dualStackPeerWithOnlyItsV6OffSegmentKeepsItsV4Route() {
        PeerRoutes peer = planned(planner(true, true),
                Leases.dual("10.244.3.0/24", "192.0.2.13", "2001:db8:42:3::/64", "2001:db8:99::13"));

        assertThat(peer.routes()).extracting(Route::isIpv4).containsExactly(true);
        assertThat(peer.refusals()).singleElement().asString().contains("PublicIPv6 not directly reachable");
    }

    @Test
    void leaseWithoutPublicIpIsRefused() {
        PeerRoutes peer = planned(planner(true, true),
                Leases.dual("10.244.3.0/24", "192.0.2.13", "2001:db8:42:3::/64", null));

        assertThat(peer.routes()).hasSize(1);
        assertThat(peer.refusals()).singleElement().asString().contains("lease has no PublicIPv6");
    }

    @Test
    void otherBackendsLeasesAreIgnoredWithUpstreamsWarning() {
        assertThat(planner(true, false).plan(Leases.typed("10.244.3.0/24", "192.0.2.13", "vxlan")))
                .isEqualTo(new RoutePlanner.Ignored("Ignoring non-host-gw subnet: type=vxlan"));
        assertThat(planner(true, false).plan(Leases.typed("10.244.3.0/24", "192.0.2.13", "")))
                .isEqualTo(new RoutePlanner.Ignored("Ignoring non-host-gw subnet: type="));
    }
}
