package org.jflannel.backend.vxlan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.jflannel.backend.vxlan.Leases.ip;

import java.net.Inet4Address;
import java.util.List;
import java.util.Map;
import org.jflannel.core.ConfigException;
import org.jflannel.core.MacAddress;
import org.jflannel.linuxnet.netlink.IpPrefix;
import org.jflannel.linuxnet.netlink.Nexthop;
import org.jflannel.linuxnet.netlink.Route;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Ours (issue 23): IPv4 peer routes through nexthop objects; planning, read-back and the switch. */
class RouteNexthopsTest {
    private static final int DEV = 5;
    private static final String MAC = "0e:00:00:00:00:02";

    private static PeerEntries.Encapsulated planned(String subnet, String publicIp, boolean nexthops) {
        var outcome = new PeerPlanner(DEV, 7, false, a -> false, nexthops).plan(Leases.v4(subnet, publicIp, MAC));
        return (PeerEntries.Encapsulated) ((PeerPlanner.Planned) outcome).plan().entries().get(0);
    }

    @Test
    void theNexthopIdIsTheGatewayReadAsANumber() {
        assertThat(PeerPlanner.nexthopId((Inet4Address) ip("10.244.3.0"))).isEqualTo(0x0af40300);
        assertThat(Integer.toUnsignedString(PeerPlanner.nexthopId((Inet4Address) ip("192.168.255.0")))).isEqualTo("3232300800");
    }

    @Test
    void withNexthopsTheRouteGoesThroughAnOnlinkNexthopOnTheVtep() {
        PeerEntries.Encapsulated e = planned("10.244.3.0/24", "192.0.2.3", true);
        Nexthop nh = Nexthop.onlink(0x0af40300, ip("10.244.3.0"), DEV);
        assertThat(e.nexthop()).isEqualTo(nh);
        assertThat(e.route()).isEqualTo(Route.through(IpPrefix.parse("10.244.3.0/24"), nh));
        // neighbour and FDB entry as ever
        assertThat(e.neighbour().ip()).isEqualTo(ip("10.244.3.0"));
        assertThat(e.fdb().mac()).isEqualTo(MacAddress.parse(MAC));
    }

    @Test
    void withoutNexthopsThePlanIsUpstreams() {
        PeerEntries.Encapsulated e = planned("10.244.3.0/24", "192.0.2.3", false);
        assertThat(e.nexthop()).isNull();
        assertThat(e.route()).isEqualTo(Route.onlink(IpPrefix.parse("10.244.3.0/24"), ip("10.244.3.0"), DEV));
    }

    @Test
    void ipv6RoutesStayPlain() {
        var lease = Leases.dual("10.244.3.0/24", "192.0.2.3", MAC, "fd00:42:3::/64", "2001:db8::3", MAC);
        var entries = ((PeerPlanner.Planned) new PeerPlanner(DEV, 7, false, a -> false, true).plan(lease)).plan().entries();
        assertThat(entries).extracting(en -> ((PeerEntries.Encapsulated) en).nexthop() != null).containsExactly(true, false);
    }

    @Test
    void aRouteThroughTheWantedNexthopIsPresentWhatEverTheDumpSaysOfItsGateway() {
        PeerEntries.Encapsulated e = planned("10.244.3.0/24", "192.0.2.3", true);
        // nexthop_compat_mode=0: the route dump carries only the id
        Route bare = new Route(e.route().dst(), null, 0, 0, false, Route.TYPE_UNICAST, Route.TABLE_MAIN, 3, e.nexthop().id());
        KernelDiff d = KernelDiff.of(List.of(e), List.of(e.neighbour()), List.of(e.fdb()), List.of(bare),
                List.of(e.nexthop()), true);
        assertThat(d.missing()).isEmpty();
        assertThat(d.strays()).isZero();
    }

    @Test
    void aPlainRouteAMissingOrDifferentNexthopMakeTheRouteWrong() {
        PeerEntries.Encapsulated e = planned("10.244.3.0/24", "192.0.2.3", true);
        Route plain = Route.onlink(e.route().dst(), e.nexthop().gateway(), DEV);
        Nexthop elsewhere = Nexthop.onlink(e.nexthop().id(), ip("10.244.9.0"), DEV);
        // upstream flanneld's route (a rolling upgrade): written again through the nexthop
        assertThat(KernelDiff.of(List.of(e), List.of(e.neighbour()), List.of(e.fdb()), List.of(plain),
                List.of(e.nexthop()), true).missing()).containsExactly(new KernelDiff.Missing(e, 1));
        assertThat(KernelDiff.of(List.of(e), List.of(e.neighbour()), List.of(e.fdb()), List.of(e.route()),
                List.of(), true).missing()).containsExactly(new KernelDiff.Missing(e, 1));
        assertThat(KernelDiff.of(List.of(e), List.of(e.neighbour()), List.of(e.fdb()), List.of(e.route()),
                List.of(elsewhere), false).missing()).containsExactly(new KernelDiff.Missing(e, 1));
    }

    @Test
    void switchedOffARouteThroughANexthopIsWrittenAgainPlainAndTheNexthopIsAStray() {
        PeerEntries.Encapsulated was = planned("10.244.3.0/24", "192.0.2.3", true);
        PeerEntries.Encapsulated now = planned("10.244.3.0/24", "192.0.2.3", false);
        KernelDiff d = KernelDiff.of(List.of(now), List.of(now.neighbour()), List.of(now.fdb()), List.of(was.route()),
                List.of(was.nexthop()), true);
        assertThat(d.missing()).containsExactly(new KernelDiff.Missing(now, 1));
        assertThat(d.strayNexthops()).containsExactly(was.nexthop());
        assertThat(d.strayRoutes()).isEmpty(); // its destination is wanted: the replace takes it over
    }

    @Test
    void routesAndNexthopsOfNoLeaseAreStraysOnlyOnceTheLeasesAreKnown() {
        PeerEntries.Encapsulated a = planned("10.244.3.0/24", "192.0.2.3", true);
        PeerEntries.Encapsulated gone = planned("10.244.4.0/24", "192.0.2.4", true);
        Route bare = new Route(gone.route().dst(), null, 0, 0, false, Route.TYPE_UNICAST, Route.TABLE_MAIN, 3,
                gone.nexthop().id());
        List<Route> routes = List.of(a.route(), bare);
        List<Nexthop> nexthops = List.of(a.nexthop(), gone.nexthop());
        assertThat(KernelDiff.of(List.of(a), List.of(), List.of(), routes, nexthops, false).strays()).isZero();
        KernelDiff d = KernelDiff.of(List.of(a), List.of(a.neighbour()), List.of(a.fdb()), routes, nexthops, true);
        assertThat(d.strayRoutes()).containsExactly(bare);
        assertThat(d.strayNexthops()).containsExactly(gone.nexthop());
    }

    @ParameterizedTest
    @CsvSource(nullValues = "NULL", value = {"NULL, false", "'', false", "1, true", "on, true", "TRUE, true", "0, false",
        "off, false", "false, false"})
    void theSwitchReadsOnAndOff(String value, boolean expected) throws ConfigException {
        Map<String, String> env = value == null ? Map.of() : Map.of(VxlanSettings.ROUTE_NEXTHOPS, value);
        assertThat(VxlanSettings.routeNexthops(env, false)).isEqualTo(expected);
    }

    @Test
    void aBadValueNamesTheVariable() {
        assertThatThrownBy(() -> VxlanSettings.routeNexthops(Map.of(VxlanSettings.ROUTE_NEXTHOPS, "maybe"), false))
                .isInstanceOf(ConfigException.class).hasMessageContaining("JFLANNEL_ROUTE_NEXTHOPS").hasMessageContaining("maybe");
    }

    @Test
    void aRouteWhoseIdIsNotItsNexthopsIsRefused() {
        PeerEntries.Encapsulated e = planned("10.244.3.0/24", "192.0.2.3", true);
        assertThatThrownBy(() -> new PeerEntries.Encapsulated(e.neighbour(), e.fdb(), e.route(), null))
                .hasMessageContaining("nhid");
    }
}
