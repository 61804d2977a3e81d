package org.jflannel.backend.hostgw;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.jflannel.core.LeaseEvent;
import org.jflannel.testsupport.cluster.Wait;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The host-gw backend against the real kernel in a throwaway namespace (iproute2 as the witness). */
@Tag("netns")
class HostGwRoutesIT {
    static final Duration LIMIT = Duration.ofSeconds(20);
    static final String ROUTE_2 = "10.244.2.0/24 via 192.0.2.12 boot global unicast []";
    static final String ROUTE_3 = "10.244.3.0/24 via 192.0.2.13 boot global unicast []";

    @Test
    void leaseAddedGivesARouteViaThePeerPublicIpWithUpstreamsAttributes() throws Exception {
        try (HostGwNode node = HostGwNode.create()) {
            HostGwNetwork n = node.register(HostGwNode.V4_CONF, "10.244.1.0/24", null);
            node.apply(LeaseEvent.added(Leases.v4("10.244.2.0/24", "192.0.2.12")),
                    LeaseEvent.added(Leases.v4("10.244.3.0/24", "192.0.2.13")));

            assertThat(node.routes()).containsExactlyInAnyOrder(ROUTE_2, ROUTE_3);
            assertThat(n.mtu()).as("the external interface's MTU: no encapsulation").isEqualTo(node.mtu());
            var attrs = node.subnets.published();
            assertThat(attrs.backendType()).isEqualTo("host-gw");
            assertThat(attrs.backendData()).as("no backend data").isNull();
            assertThat(attrs.backendV6Data()).isNull();
            assertThat(attrs.publicIp()).isEqualTo(Leases.ip(HostGwNode.ADDR));
            assertThat(attrs.publicIpv6()).as("IPv6 off").isNull();
            assertThat(n.peers()).isEqualTo(2);
        }
    }

    @Test
    void leaseRemovedDeletesItsRouteOnly() throws Exception {
        try (HostGwNode node = HostGwNode.create()) {
            node.register(HostGwNode.V4_CONF, "10.244.1.0/24", null);
            node.apply(LeaseEvent.added(Leases.v4("10.244.2.0/24", "192.0.2.12")),
                    LeaseEvent.added(Leases.v4("10.244.3.0/24", "192.0.2.13")));

            node.apply(LeaseEvent.removed(Leases.v4("10.244.2.0/24", "192.0.2.12")));

            assertThat(node.routes()).containsExactly(ROUTE_3);
        }
    }

    @Test
    void peerMovedToAnotherAddressGetsItsRouteReplaced() throws Exception {
        try (HostGwNode node = HostGwNode.create()) {
            node.register(HostGwNode.V4_CONF, "10.244.1.0/24", null);
            node.apply(LeaseEvent.added(Leases.v4("10.244.2.0/24", "192.0.2.12")));

            node.apply(LeaseEvent.added(Leases.v4("10.244.2.0/24", "192.0.2.22")));

            assertThat(node.routes()).containsExactly("10.244.2.0/24 via 192.0.2.22 boot global unicast []");
        }
    }

    @Test
    void peerOnAnotherSubnetIsRefusedWhileTheOthersWork() throws Exception {
        try (HostGwNode node = HostGwNode.create()) {
            HostGwNetwork n = node.register(HostGwNode.V4_CONF, "10.244.1.0/24", null);

            node.apply(LeaseEvent.added(Leases.v4("10.244.9.0/24", "198.51.100.7")), // not on ul0's segment
                    LeaseEvent.added(Leases.v4("10.244.2.0/24", "192.0.2.12")),
                    LeaseEvent.added(Leases.typed("10.244.4.0/24", "192.0.2.14", "vxlan")));
            node.reconcile(); // the periodic pass re-checks the refused peer and still refuses it

            assertThat(node.routes()).containsExactly(ROUTE_2);
            assertThat(n.counters().errors(HostGwCounters.ErrorKind.LEASE_SKIPPED)).as("refused once, not per pass").isEqualTo(1);
            assertThat(n.counters().errors(HostGwCounters.ErrorKind.ROUTE)).as("never sent to the kernel").isZero();
        }
    }

    @Test
    void refusedPeerIsAcceptedOnceItsAddressBecomesReachable() throws Exception {
        try (HostGwNode node = HostGwNode.create()) {
            node.register(HostGwNode.V4_CONF, "10.244.1.0/24", null);
            node.apply(LeaseEvent.added(Leases.v4("10.244.9.0/24", "198.51.100.7")));
            assertThat(node.routes()).isEmpty();

            node.ip("addr", "add", "198.51.100.1/24", "dev", "ul0"); // the segment grows
            node.reconcile();

            assertThat(node.routes()).containsExactly("10.244.9.0/24 via 198.51.100.7 boot global unicast []");
        }
    }

    @Test
    void routeDeletedByHandIsRestoredThroughTheNetlinkEvent() throws Exception {
        try (HostGwNode node = HostGwNode.create()) {
            HostGwNetwork n = node.register(HostGwNode.V4_CONF, "10.244.1.0/24", null);
            node.apply(LeaseEvent.added(Leases.v4("10.244.2.0/24", "192.0.2.12")),
                    LeaseEvent.added(Leases.v4("10.244.3.0/24", "192.0.2.13")));

            node.ip("route", "del", "10.244.2.0/24", "via", "192.0.2.12", "dev", "ul0");

            Wait.until("the route back", LIMIT, () -> node.routes().contains(ROUTE_2));
            assertThat(node.routes()).containsExactlyInAnyOrder(ROUTE_2, ROUTE_3);
            // the route is written in the middle of the pass; the counter moves when the pass ends
            Wait.until("the repair counted", LIMIT, () -> n.counters().repairs() > 0);
            assertThat(n.counters().repairs()).isPositive();
        }
    }

    @Test
    void routesComeBackAfterTheInterfaceWentDownAndUp() throws Exception {
        try (HostGwNode node = HostGwNode.create()) {
            node.register(HostGwNode.V4_CONF, "10.244.1.0/24", null);
            node.apply(LeaseEvent.added(Leases.v4("10.244.2.0/24", "192.0.2.12")));

            node.ip("link", "set", "ul0", "down"); // the kernel flushes routes through it
            assertThat(node.routes()).isEmpty();
            node.ip("link", "set", "ul0", "up");

            Wait.until("the route back", LIMIT, () -> node.routes().contains(ROUTE_2));
        }
    }

    @Test
    void periodicReconcileRestoresARouteDeletedUnseen() throws Exception {
        try (HostGwNode node = HostGwNode.create()) {
            node.settings = new HostGwSettings(Duration.ofMillis(200), Duration.ofMillis(50));
            HostGwNetwork n = node.register(HostGwNode.V4_CONF, "10.244.1.0/24", null);
            node.apply(LeaseEvent.added(Leases.v4("10.244.2.0/24", "192.0.2.12")));
            long before = n.counters().reconciles();

            node.ip("route", "del", "10.244.2.0/24", "via", "192.0.2.12", "dev", "ul0");

            Wait.until("the route back and periodic passes ran", LIMIT,
                    () -> node.routes().contains(ROUTE_2) && n.counters().reconciles() >= before + 2);
        }
    }

    @Test
    void staleRoutesOfVanishedPeersGoAtStartUpAndNothingElseIsTouched() throws Exception {
        try (HostGwNode node = HostGwNode.create()) {
            node.ip("route", "add", "10.244.5.0/24", "via", "192.0.2.15", "dev", "ul0");          // a vanished peer
            node.ip("route", "add", "10.244.2.0/24", "via", "192.0.2.99", "dev", "ul0");          // a peer's old address
            node.ip("route", "add", "10.244.0.0/16", "via", "192.0.2.254", "dev", "ul0");         // whole Network: not ours
            node.ip("route", "add", "10.245.7.0/24", "via", "192.0.2.17", "dev", "ul0");          // outside the Network
            node.ip("route", "add", "10.244.8.0/24", "via", "192.0.2.18", "dev", "ul0", "proto", "static");
            node.ip("route", "add", "blackhole", "10.244.1.0/24");                                // our own subnet
            node.ip("route", "add", "10.244.6.0/24", "dev", "ul0");                               // no gateway
            node.register(HostGwNode.V4_CONF, "10.244.1.0/24", null);

            node.apply(LeaseEvent.added(Leases.v4("10.244.2.0/24", "192.0.2.12"))); // the first, complete list

            assertThat(node.routes()).containsExactlyInAnyOrder(
                    "10.244.0.0/16 via 192.0.2.254 boot global unicast []",
                    "10.244.2.0/24 via 192.0.2.12 boot global unicast []",
                    "10.244.6.0/24 via  boot link unicast []",
                    "10.244.8.0/24 via 192.0.2.18 static global unicast []",
                    "10.245.7.0/24 via 192.0.2.17 boot global unicast []");
            assertThat(node.ip("route", "show", "type", "blackhole")).contains("10.244.1.0/24");
        }
    }

    @Test
    void routesStayAcrossADaemonRestartUntouched() throws Exception {
        try (HostGwNode node = HostGwNode.create()) {
            node.register(HostGwNode.V4_CONF, "10.244.1.0/24", null);
            node.apply(LeaseEvent.added(Leases.v4("10.244.2.0/24", "192.0.2.12")));
            node.network.close(); // the daemon stops: routes stay (REFERENCE §9.4)
            assertThat(node.routes()).containsExactly(ROUTE_2);

            HostGwNetwork again = node.register(HostGwNode.V4_CONF, "10.244.1.0/24", null);
            node.apply(LeaseEvent.added(Leases.v4("10.244.2.0/24", "192.0.2.12")));

            assertThat(node.routes()).containsExactly(ROUTE_2);
            assertThat(again.counters().routesRemoved()).as("nothing deleted and re-added").isZero();
            assertThat(again.counters().repairs()).isZero();
        }
    }

    @Test
    void dualStackLeaseGetsARoutePerFamily() throws Exception {
        try (HostGwNode node = HostGwNode.create()) {
            node.register(HostGwNode.DUAL_CONF, "10.244.1.0/24", "2001:db8:42:1::/64");
            node.apply(LeaseEvent.added(Leases.dual("10.244.2.0/24", "192.0.2.12", "2001:db8:42:2::/64", "2001:db8:1::12")));

            assertThat(node.routes()).containsExactlyInAnyOrder(ROUTE_2,
                    "2001:db8:42:2::/64 via 2001:db8:1::12 boot global unicast []");
            assertThat(node.subnets.published().publicIpv6()).isEqualTo(Leases.ip(HostGwNode.ADDR6));
            assertThat(node.subnets.published().backendV6Data()).isNull();

            node.apply(LeaseEvent.removed(Leases.dual("10.244.2.0/24", "192.0.2.12", "2001:db8:42:2::/64", "2001:db8:1::12")));
            assertThat(node.routes()).isEmpty();
        }
    }

    @Test
    void staleIpv6RouteGoesAtStartUp() throws Exception {
        try (HostGwNode node = HostGwNode.create()) {
            node.ip("-6", "route", "add", "2001:db8:42:5::/64", "via", "2001:db8:1::15", "dev", "ul0");
            node.register(HostGwNode.DUAL_CONF, "10.244.1.0/24", "2001:db8:42:1::/64");

            node.apply();

            assertThat(node.routes()).isEmpty();
        }
    }
}
