package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.jflannel.linuxnet.netlink.Route;
import org.jflannel.testsupport.cluster.ClusterNode;
import org.jflannel.testsupport.cluster.ClusterOptions;
import org.jflannel.testsupport.cluster.ClusterPerClass;
import org.jflannel.testsupport.cluster.FlannelEntries;
import org.jflannel.testsupport.cluster.NetnsCluster;
import org.jflannel.testsupport.cluster.NodeLease;
import org.jflannel.testsupport.cluster.Pod;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The 3-node etcd cluster on host-gw in dual stack: each peer's IPv6 subnet is routed via its IPv6
 * underlay address on eth0 (as its IPv4 subnet via its IPv4 address), no overlay device; both
 * families' ping matrices are full and a checked TCP stream crosses over IPv6 both ways. One cluster
 * for the class.
 */
@Tag("e2e")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class EtcdHostGwDualStackClusterIT {
    @RegisterExtension
    static final ClusterPerClass CLUSTER = ClusterPerClass.of(ClusterOptions.defaults().withBackend("host-gw")
            .withDualStack(ClusterOptions.DEFAULT_IPV6_NETWORK));
    private final NetnsCluster cluster;

    EtcdHostGwDualStackClusterIT(NetnsCluster cluster) {
        this.cluster = cluster;
    }

    @Test
    @Order(1)
    void everyPodReachesEveryOtherPodOverIpv4AndIpv6() throws Exception {
        assertThat(cluster.pods()).hasSize(6);
        DualStack.assertSubnetEnvAndPodAddresses(cluster);
        DualStack.assertEveryPodReachesEveryOtherInBothFamilies(cluster);
    }

    @Test
    @Order(2)
    void eachPeersIpv6SubnetIsRoutedViaItsIpv6AddressOnEth0() throws Exception {
        List<NodeLease> leases = cluster.ipv6Leases();
        for (ClusterNode node : cluster.nodes()) {
            FlannelEntries e = node.hostGwRoutes();
            List<NodeLease> peers = leases.stream().filter(l -> !l.node().equals(node.name())).toList();
            for (NodeLease peer : peers) {
                assertThat(e.routesTo(peer.subnet())).as("IPv6 route on %s to %s", node.name(), peer.node()).singleElement()
                        .satisfies(r -> {
                            assertThat(r.gateway()).isEqualTo(peer.publicIp());
                            assertThat(r.linkIndex()).isEqualTo(e.link().index());
                            assertThat(r.onlink()).as("onlink").isFalse();
                            assertThat(r.type()).isEqualTo(Route.TYPE_UNICAST);
                            assertThat(r.table()).isEqualTo(Route.TABLE_MAIN);
                        });
            }
            assertThat(e.routes().stream().filter(r -> !r.isIpv4() && r.gateway() != null && r.dst() != null
                    && DualStack.within(r.dst().address(), org.jflannel.linuxnet.netlink.IpPrefix.parse(
                            cluster.options().ipv6Network())))).as("IPv6 routes into IPv6Network on %s", node.name())
                    .hasSize(peers.size());
            assertThat(node.entriesV6().linkPresent()).as("flannel-v6.1 on %s", node.name()).isFalse();
        }
    }

    @Test
    @Order(3)
    void tcpStreamsCrossOverIpv6BothWays() throws Exception {
        Pod a = MixedTraffic.podOn(cluster, 1);
        Pod b = MixedTraffic.podOn(cluster, 2);
        DualStack.assertIntactOverIpv6BothWays(a, b);
    }
}
