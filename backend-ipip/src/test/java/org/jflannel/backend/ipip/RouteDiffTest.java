package org.jflannel.backend.ipip;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.jflannel.linuxnet.netlink.IpPrefix;
import org.jflannel.linuxnet.netlink.Route;
import org.jflannel.linuxnet.netlink.RouteDiff;
import org.junit.jupiter.api.Test;

class RouteDiffTest {
    static final int TUNNEL = 7;
    static final int EXT = 2;
    static final IpPrefix NETWORK = IpPrefix.parse("10.244.0.0/16");
    static final IpPrefix OWN = IpPrefix.parse("10.244.1.0/24");
    static final OwnedRoutes OURS = new OwnedRoutes(TUNNEL, EXT, true, NETWORK, OWN);

    private static Route r(String dst, String gw, int link) {
        return Route.onlink(IpPrefix.parse(dst), Leases.ip(gw), link);
    }

    @Test
    void aWantedRouteMissingFromTheDumpIsMissing() {
        Route want = r("10.244.3.0/24", "192.0.2.12", TUNNEL);
        assertThat(RouteDiff.of(List.of(want), List.of(), OURS, true).missing()).containsExactly(want);
        assertThat(RouteDiff.of(List.of(want), List.of(want), OURS, true).missing()).isEmpty();
    }

    @Test
    void aRouteViaAnOldGatewayOrDeviceIsMissingAndTheOldOneAStray() {
        Route want = r("10.244.3.0/24", "192.0.2.12", TUNNEL);
        Route old = r("10.244.3.0/24", "192.0.2.99", TUNNEL);
        Route direct = r("10.244.3.0/24", "192.0.2.12", EXT);
        RouteDiff d = RouteDiff.of(List.of(want), List.of(old, direct), OURS, true);
        assertThat(d.missing()).containsExactly(want);
        assertThat(d.strays()).containsExactly(old, direct);
    }

    @Test
    void noStraysBeforeTheFirstLeaseList() {
        assertThat(RouteDiff.of(List.of(), List.of(r("10.244.3.0/24", "192.0.2.12", TUNNEL)), OURS, false).strays()).isEmpty();
    }

    @Test
    void onlyRoutesShapedLikeOursAreOurs() {
        assertThat(OURS.test(r("10.244.3.0/24", "192.0.2.12", TUNNEL))).isTrue();
        assertThat(OURS.test(r("10.244.3.0/24", "192.0.2.12", EXT))).isTrue();
        assertThat(new OwnedRoutes(TUNNEL, EXT, false, NETWORK, OWN).test(r("10.244.3.0/24", "192.0.2.12", EXT))).isFalse();
        assertThat(OURS.test(r("10.244.1.0/24", "192.0.2.12", TUNNEL))).as("our own subnet").isFalse();
        assertThat(OURS.test(r("10.244.0.0/16", "192.0.2.12", TUNNEL))).as("the whole Network").isFalse();
        assertThat(OURS.test(r("10.99.3.0/24", "192.0.2.12", TUNNEL))).as("outside the Network").isFalse();
        assertThat(OURS.test(r("10.244.3.0/24", "192.0.2.12", 5))).as("another device").isFalse();
        assertThat(OURS.test(new Route(IpPrefix.parse("10.244.3.0/24"), Leases.ip("192.0.2.12"), TUNNEL, Route.SCOPE_UNIVERSE,
                false, Route.TYPE_UNICAST, Route.TABLE_MAIN, Route.PROTO_BOOT))).as("no onlink").isFalse();
        assertThat(OURS.test(new Route(IpPrefix.parse("10.244.3.0/24"), Leases.ip("192.0.2.12"), TUNNEL, Route.SCOPE_UNIVERSE,
                true, Route.TYPE_UNICAST, Route.TABLE_MAIN, 4))).as("protocol static").isFalse();
    }
}
