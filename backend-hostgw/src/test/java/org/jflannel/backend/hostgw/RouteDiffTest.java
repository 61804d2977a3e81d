package org.jflannel.backend.hostgw;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Set;
import org.jflannel.linuxnet.netlink.IpPrefix;
import org.jflannel.linuxnet.netlink.Route;
import org.jflannel.linuxnet.netlink.RouteDiff;
import org.junit.jupiter.api.Test;

class RouteDiffTest {
    static final int ETH0 = 7;
    static final int OTHER = 9;
    static final OwnedRoutes OURS = new OwnedRoutes(ETH0, IpPrefix.parse("10.244.0.0/16"), IpPrefix.parse("2001:db8:42::/56"),
            List.of(IpPrefix.parse("192.0.2.0/24"), IpPrefix.parse("2001:db8:1::/64")),
            Set.of(IpPrefix.parse("10.244.1.0/24")));

    static Route peer(String subnet, String via) {
        return RoutePlanner.route(IpPrefix.parse(subnet), Leases.ip(via), ETH0);
    }

    static Route with(Route r, int link, int protocol, boolean onlink, int type) {
        return new Route(r.dst(), r.gateway(), link, r.scope(), onlink, type, r.table(), protocol);
    }

    @Test
    void wantedRoutesAbsentOrViaAnotherAddressAreMissing() {
        Route a = peer("10.244.2.0/24", "192.0.2.12");
        Route b = peer("10.244.3.0/24", "192.0.2.13");
        Route c = peer("2001:db8:42:4::/64", "2001:db8:1::14");
        List<Route> dump = List.of(a, peer("10.244.3.0/24", "192.0.2.99"));

        RouteDiff d = RouteDiff.of(List.of(a, b, c), dump, OURS, false);

        assertThat(d.missing()).containsExactly(b, c);
        assertThat(d.strays()).as("no strays before the first lease list").isEmpty();
    }

    @Test
    void routeOnAnotherDeviceDoesNotCountAsPresent() {
        Route a = peer("10.244.2.0/24", "192.0.2.12");

        assertThat(RouteDiff.of(List.of(a), List.of(with(a, OTHER, Route.PROTO_BOOT, false, Route.TYPE_UNICAST)), OURS, true)
                .missing()).containsExactly(a);
    }

    @Test
    void straysAreOurKindOfRouteThatNoLeaseWants() {
        Route wanted = peer("10.244.2.0/24", "192.0.2.12");
        Route vanished = peer("10.244.5.0/24", "192.0.2.15");
        Route vanished6 = peer("2001:db8:42:5::/64", "2001:db8:1::15");
        Route moved = peer("10.244.2.0/24", "192.0.2.99"); // same subnet via the peer's old address

        RouteDiff d = RouteDiff.of(List.of(wanted), List.of(wanted, vanished, vanished6, moved), OURS, true);

        assertThat(d.missing()).isEmpty();
        assertThat(d.strays()).containsExactly(vanished, vanished6, moved);
    }

    @Test
    void routesThatAreNotOursAreNeverStrays() {
        List<Route> others = List.of(
                peer("10.244.0.0/16", "192.0.2.1"),                    // the whole Network, e.g. an operator's route
                peer("10.245.3.0/24", "192.0.2.13"),                   // outside the Network
                peer("10.244.1.0/24", "192.0.2.13"),                   // our own subnet
                peer("10.244.6.0/24", "198.51.100.6"),                 // gateway off the segment
                with(peer("10.244.7.0/24", "192.0.2.17"), OTHER, Route.PROTO_BOOT, false, Route.TYPE_UNICAST),
                with(peer("10.244.8.0/24", "192.0.2.18"), ETH0, OwnedRoutes.RTPROT_KERNEL, false, Route.TYPE_UNICAST),
                with(peer("10.244.12.0/24", "192.0.2.22"), ETH0, 4, false, Route.TYPE_UNICAST), // proto static
                with(peer("10.244.13.0/24", "192.0.2.23"), ETH0, 12, false, Route.TYPE_UNICAST), // a routing daemon's
                with(peer("10.244.9.0/24", "192.0.2.19"), ETH0, Route.PROTO_BOOT, true, Route.TYPE_UNICAST), // onlink: vxlan's kind
                new Route(IpPrefix.parse("10.244.10.0/24"), null, ETH0, Route.SCOPE_LINK, false, Route.TYPE_UNICAST,
                        Route.TABLE_MAIN, Route.PROTO_BOOT),           // no gateway
                new Route(null, Leases.ip("192.0.2.1"), ETH0, 0, false, Route.TYPE_UNICAST, Route.TABLE_MAIN, Route.PROTO_BOOT),
                peer("10.244.11.0/24", "192.0.2.21").inTable(100));   // another table

        assertThat(RouteDiff.of(List.of(), others, OURS, true).strays()).isEmpty();
    }
}
