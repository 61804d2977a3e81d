package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.time.Duration;
import java.util.List;
import org.jflannel.linuxnet.netlink.Route;
import org.jflannel.testsupport.cluster.ClusterNode;
import org.jflannel.testsupport.cluster.FlannelEntries;
import org.jflannel.testsupport.cluster.NetnsCluster;
import org.jflannel.testsupport.cluster.NodeLease;
import org.jflannel.testsupport.cluster.Wait;

/** host-gw assertions on a whole cluster, shared by the etcd- and Kubernetes-mode suites. */
final class HostGwOverlay {
    static final Duration WITHIN = Duration.ofSeconds(30);
    /** Off every node's segment (192.0.2.0/24): a peer host-gw must refuse. */
    static final String OFF_SEGMENT_IP = "198.51.100.7";
    static final String OFF_SEGMENT_SUBNET = "10.244.249.0/24";
    /** A peer on the segment that runs upstream flannel (no host answers there: only its route is checked). */
    static final String UPSTREAM_IP = "192.0.2.50";
    static final String UPSTREAM_SUBNET = "10.244.250.0/24";

    private HostGwOverlay() {
    }

    /**
     * Each node routes every peer's subnet with exactly one route on eth0 and upstream's attributes:
     * via the peer's public IP, no onlink flag, scope universe, main table, unicast, protocol boot;
     * no VXLAN device; FLANNEL_MTU is eth0's MTU (1500) and subnet.env has upstream's four lines.
     */
    static void assertOneRoutePerPeer(NetnsCluster cluster) throws Exception {
        List<NodeLease> leases = cluster.leases();
        for (ClusterNode node : cluster.nodes()) {
            FlannelEntries e = node.hostGwRoutes();
            List<NodeLease> peers = leases.stream().filter(l -> !l.node().equals(node.name())).toList();
            for (NodeLease peer : peers) {
                assertThat(e.routesTo(peer.subnet())).as("route on %s to %s", node.name(), peer.node()).singleElement()
                        .satisfies(r -> {
                            assertThat(r.gateway()).isEqualTo(peer.publicIp());
                            assertThat(r.linkIndex()).isEqualTo(e.link().index());
                            assertThat(r.onlink()).as("onlink").isFalse();
                            assertThat(r.scope()).isEqualTo(Route.SCOPE_UNIVERSE);
                            assertThat(r.type()).isEqualTo(Route.TYPE_UNICAST);
                            assertThat(r.table()).isEqualTo(Route.TABLE_MAIN);
                            assertThat(r.protocol()).isEqualTo(Route.PROTO_BOOT);
                        });
            }
            assertThat(e.routes().stream().filter(r -> r.gateway() != null && r.dst() != null
                    && r.dst().toString().startsWith("10.244."))).as("routes into the Network on %s", node.name())
                    .hasSize(peers.size());
            assertThat(node.entries().linkPresent()).as("flannel.1 on %s", node.name()).isFalse();
            assertThat(node.lease().mtu()).as("FLANNEL_MTU on %s", node.name()).isEqualTo(1500);
            assertThat(node.readSubnetEnv()).containsOnlyKeys("FLANNEL_NETWORK", "FLANNEL_SUBNET", "FLANNEL_MTU",
                    "FLANNEL_IPMASQ");
        }
    }

    /** Every node routes {@code subnet} via {@code via} on eth0 (or, with via null, has no route to it). */
    static void awaitRouteOnEveryNode(NetnsCluster cluster, String subnet, InetAddress via) throws Exception {
        for (ClusterNode node : cluster.nodes()) {
            Wait.until(node.name() + (via == null ? " without a route to " : " routing ") + subnet, WITHIN,
                    node::hostGwRoutes, e -> via == null ? e.routesTo(subnet).isEmpty()
                            : e.routesTo(subnet).stream().anyMatch(r -> via.equals(r.gateway())));
        }
    }

    /** A peer off the segment is refused by every node with one log line, and gets no route. */
    static void awaitRefusedEverywhere(NetnsCluster cluster) throws Exception {
        for (ClusterNode node : cluster.nodes()) {
            Wait.until(node.name() + " logging the refusal", WITHIN,
                    () -> node.logSinceStart().contains("peer refused"));
            String log = node.logSinceStart();
            assertThat(log.lines().filter(l -> l.contains("peer refused"))).as("refusal lines on %s", node.name())
                    .singleElement().asString().contains("subnet=" + OFF_SEGMENT_SUBNET).contains("via=" + OFF_SEGMENT_IP)
                    .contains("not directly reachable on eth0");
            assertThat(node.hostGwRoutes().routesTo(OFF_SEGMENT_SUBNET)).as("route on %s", node.name()).isEmpty();
        }
    }

    /** A route deleted by hand on node 1 comes back (netlink event, else the 10 s pass). */
    static void assertHandDeletedRouteRestored(NetnsCluster cluster) throws Exception {
        ClusterNode n1 = cluster.node(1);
        NodeLease peer = cluster.node(2).lease();
        n1.deleteHostGwRoute(peer.subnet());
        Wait.until("route to " + peer.subnet() + " back on " + n1.name(), WITHIN, n1::hostGwRoutes,
                e -> e.routesTo(peer.subnet()).stream().anyMatch(r -> peer.publicIp().equals(r.gateway())));
    }
}
