package org.jflannel.backend.vxlan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.jflannel.backend.vxlan.Leases.ip;

import java.net.InetAddress;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.jflannel.core.Lease;
import org.jflannel.core.MacAddress;
import org.jflannel.linuxnet.netlink.FdbEntry;
import org.jflannel.linuxnet.netlink.IpPrefix;
import org.jflannel.linuxnet.netlink.Neighbour;
import org.jflannel.linuxnet.netlink.Route;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class PeerPlannerTest {
    static final int V4 = 7;
    static final int V6 = 8;
    static final String MAC = "0e:11:22:33:44:55";
    static final String MAC6 = "0e:66:77:88:99:aa";
    static final Predicate<InetAddress> NEVER = a -> false;

    static Stream<Arguments> plans() {
        return Stream.of(
            Arguments.of("v4 peer: neighbour, fdb, onlink route",
                Leases.v4("10.244.3.0/24", "192.0.2.12", MAC), V4, 0, false, NEVER,
                List.of(vxlan(V4, "10.244.3.0/24", "10.244.3.0", "192.0.2.12", MAC))),
            Arguments.of("dual peer on dual node: one set per family",
                Leases.dual("10.244.3.0/24", "192.0.2.12", MAC, "fd00:42:3::/64", "2001:db8::12", MAC6), V4, V6, false, NEVER,
                List.of(vxlan(V4, "10.244.3.0/24", "10.244.3.0", "192.0.2.12", MAC),
                        vxlan(V6, "fd00:42:3::/64", "fd00:42:3::", "2001:db8::12", MAC6))),
            Arguments.of("dual peer on v6-only node: v6 only",
                Leases.dual("10.244.3.0/24", "192.0.2.12", MAC, "fd00:42:3::/64", "2001:db8::12", MAC6), 0, V6, false, NEVER,
                List.of(vxlan(V6, "fd00:42:3::/64", "fd00:42:3::", "2001:db8::12", MAC6))),
            Arguments.of("v4 peer on v6-only node: nothing to do",
                Leases.v4("10.244.3.0/24", "192.0.2.12", MAC), 0, V6, false, NEVER, List.of()),
            Arguments.of("DirectRouting, peer on our L2: one route via its public IP",
                Leases.v4("10.244.3.0/24", "192.0.2.12", MAC), V4, 0, true, (Predicate<InetAddress>) a -> true,
                List.of(new PeerEntries.Direct(Route.via(IpPrefix.parse("10.244.3.0/24"), ip("192.0.2.12"))))),
            Arguments.of("DirectRouting, peer behind a router: vxlan",
                Leases.v4("10.244.3.0/24", "192.0.2.12", MAC), V4, 0, true, NEVER,
                List.of(vxlan(V4, "10.244.3.0/24", "10.244.3.0", "192.0.2.12", MAC))),
            Arguments.of("DirectRouting per family: v4 direct, v6 encapsulated",
                Leases.dual("10.244.3.0/24", "192.0.2.12", MAC, "fd00:42:3::/64", "2001:db8::12", MAC6), V4, V6, true,
                (Predicate<InetAddress>) Set.of(ip("192.0.2.12"))::contains,
                List.of(new PeerEntries.Direct(Route.via(IpPrefix.parse("10.244.3.0/24"), ip("192.0.2.12"))),
                        vxlan(V6, "fd00:42:3::/64", "fd00:42:3::", "2001:db8::12", MAC6))));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("plans")
    void plansEntries(String name, Lease lease, int v4, int v6, boolean direct, Predicate<InetAddress> sameL2,
                      List<PeerEntries> expected) {
        PeerPlanner.Outcome outcome = new PeerPlanner(v4, v6, direct, sameL2).plan(lease);
        assertThat(outcome).isInstanceOf(PeerPlanner.Planned.class);
        assertThat(((PeerPlanner.Planned) outcome).plan().entries()).containsExactlyElementsOf(expected);
    }

    static Stream<Arguments> skips() {
        return Stream.of(
            Arguments.of(Leases.raw("10.244.3.0/24", "192.0.2.12", "udp", null),
                "ignoring non-vxlan v4Subnet(10.244.3.0/24) v6Subnet(<nil>): type=udp"),
            Arguments.of(Leases.raw("10.244.3.0/24", "192.0.2.12", "", null),
                "ignoring non-vxlan v4Subnet(10.244.3.0/24) v6Subnet(<nil>): type="),
            Arguments.of(Leases.raw("10.244.3.0/24", "192.0.2.12", "host-gw", "{}"),
                "ignoring non-vxlan v4Subnet(10.244.3.0/24) v6Subnet(<nil>): type=host-gw"),
            Arguments.of(Leases.raw("10.244.3.0/24", "192.0.2.12", "vxlan", "not json"),
                "error decoding subnet lease JSON: invalid JSON"),
            Arguments.of(Leases.raw("10.244.3.0/24", "192.0.2.12", "vxlan", null),
                "error decoding subnet lease JSON: unexpected end of JSON input"),
            Arguments.of(Leases.raw("10.244.3.0/24", "192.0.2.12", "vxlan", "{\"VNI\":1,\"VtepMAC\":\"nope\"}"),
                "error decoding subnet lease JSON: VtepMAC"),
            Arguments.of(Leases.dualRaw("10.244.3.0/24", "192.0.2.12", "fd00:42:3::/64", "2001:db8::12",
                    Leases.data(MAC), "{bad"),
                "error decoding v6 subnet lease JSON: invalid JSON"));
    }

    @ParameterizedTest
    @MethodSource("skips")
    void skipsWithUpstreamText(Lease lease, String reason) {
        PeerPlanner.Outcome outcome = new PeerPlanner(V4, V6, false, NEVER).plan(lease);
        assertThat(outcome).isInstanceOf(PeerPlanner.Skipped.class);
        assertThat(((PeerPlanner.Skipped) outcome).reason()).startsWith(reason);
    }

    @Test
    void directRoutingIsNotAskedWhenOff() {
        Predicate<InetAddress> boom = a -> {
            throw new AssertionError("route lookup without DirectRouting");
        };
        PeerPlanner.Outcome outcome = new PeerPlanner(V4, 0, false, boom).plan(Leases.v4("10.244.3.0/24", "192.0.2.12", MAC));
        assertThat(outcome).isInstanceOf(PeerPlanner.Planned.class);
    }

    static PeerEntries vxlan(int link, String subnet, String gw, String publicIp, String mac) {
        MacAddress m = MacAddress.parse(mac);
        return new PeerEntries.Encapsulated(Neighbour.permanent(link, ip(gw), m), new FdbEntry(link, m, ip(publicIp)),
                Route.onlink(IpPrefix.parse(subnet), ip(gw), link));
    }
}
