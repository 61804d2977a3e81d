package org.jflannel.backend.ipip;

import static org.assertj.core.api.Assertions.assertThat;

import org.jflannel.core.peers.LeasePlan;
import org.jflannel.linuxnet.netlink.IpPrefix;
import org.jflannel.linuxnet.netlink.Route;
import org.junit.jupiter.api.Test;

class IpipRoutesTest {
    static final int TUNNEL = 7;
    static final int EXT = 2;

    @Test
    void peerGetsAnOnlinkRouteViaItsPublicIpThroughTheTunnel() {
        var plan = new IpipRoutes(TUNNEL, EXT, false, ip -> true).plan(Leases.v4("10.244.3.0/24", "192.0.2.12"));

        assertThat(plan).isInstanceOf(LeasePlan.Planned.class);
        Route r = ((LeasePlan.Planned<Route>) plan).entries().get(0);
        assertThat(((LeasePlan.Planned<Route>) plan).entries()).hasSize(1);
        assertThat(r.dst()).isEqualTo(IpPrefix.parse("10.244.3.0/24"));
        assertThat(r.gateway()).isEqualTo(Leases.ip("192.0.2.12"));
        assertThat(r.linkIndex()).isEqualTo(TUNNEL);
        assertThat(r.onlink()).isTrue();
        assertThat(r.table()).isEqualTo(Route.TABLE_MAIN);
        assertThat(r.scope()).isEqualTo(Route.SCOPE_UNIVERSE);
        assertThat(r.protocol()).isEqualTo(Route.PROTO_BOOT);
        assertThat(r.type()).isEqualTo(Route.TYPE_UNICAST);
    }

    @Test
    void directRoutingSendsAPeerOnOurSegmentOutOfTheExternalInterfaceKeepingOnlinkAsUpstream() {
        var routes = new IpipRoutes(TUNNEL, EXT, true, ip -> ip.equals(Leases.ip("192.0.2.12")));

        Route near = ((LeasePlan.Planned<Route>) routes.plan(Leases.v4("10.244.3.0/24", "192.0.2.12"))).entries().get(0);
        Route far = ((LeasePlan.Planned<Route>) routes.plan(Leases.v4("10.244.4.0/24", "198.51.100.4"))).entries().get(0);

        assertThat(near).isEqualTo(Route.onlink(IpPrefix.parse("10.244.3.0/24"), Leases.ip("192.0.2.12"), EXT));
        assertThat(far).isEqualTo(Route.onlink(IpPrefix.parse("10.244.4.0/24"), Leases.ip("198.51.100.4"), TUNNEL));
    }

    @Test
    void withoutDirectRoutingReachabilityIsNeverAsked() {
        var routes = new IpipRoutes(TUNNEL, EXT, false, ip -> {
            throw new AssertionError("asked about " + ip);
        });
        assertThat(routes.plan(Leases.v4("10.244.3.0/24", "192.0.2.12"))).isInstanceOf(LeasePlan.Planned.class);
    }

    @Test
    void anotherBackendsLeaseIsIgnoredWithUpstreamsWarning() {
        var plan = new IpipRoutes(TUNNEL, EXT, false, ip -> true).plan(Leases.typed("10.244.3.0/24", "192.0.2.12", "vxlan"));

        assertThat(plan).isEqualTo(new LeasePlan.Skipped<Route>("Ignoring non-ipip subnet: type=vxlan", false));
    }

    @Test
    void aLeaseWithoutIpv4IsSkippedAsAnError() {
        var plan = new IpipRoutes(TUNNEL, EXT, false, ip -> true).plan(Leases.v6Only("fd00:10:244:3::/64"));

        assertThat(plan).isInstanceOf(LeasePlan.Skipped.class);
        assertThat(((LeasePlan.Skipped<Route>) plan).counted()).isTrue();
        assertThat(((LeasePlan.Skipped<Route>) plan).reason()).contains("IPv4");
    }

    @Test
    void describeNamesSubnetAndGateway() {
        assertThat(IpipRoutes.describe(Route.onlink(IpPrefix.parse("10.244.3.0/24"), Leases.ip("192.0.2.12"), TUNNEL)))
                .isEqualTo("subnet=10.244.3.0/24 via=192.0.2.12");
    }
}
