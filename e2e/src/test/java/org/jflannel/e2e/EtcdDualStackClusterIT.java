package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import org.jflannel.testsupport.cluster.ClusterNames;
import org.jflannel.testsupport.cluster.ClusterNode;
import org.jflannel.testsupport.cluster.ClusterOptions;
import org.jflannel.testsupport.cluster.ClusterPerClass;
import org.jflannel.testsupport.cluster.FlannelEntries;
import org.jflannel.testsupport.cluster.NetnsCluster;
import org.jflannel.testsupport.cluster.NodeLease;
import org.jflannel.testsupport.cluster.Pod;
import org.jflannel.testsupport.cluster.Wait;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The 3-node etcd cluster on vxlan in dual stack: net-conf.json with {@code EnableIPv6} and
 * {@code IPv6Network}, each node's eth0 with an IPv4 and a ULA IPv6 address on the fabric bridge (found
 * by flanneld on {@code --iface=eth0}), pods attached through the real CNI chain with an address of each
 * family. Both families' ping matrices are full, a checked TCP stream crosses over IPv6 both ways, and
 * every node holds {@code flannel-v6.1} with upstream's attributes and exactly one IPv6 neighbour, FDB
 * entry and route per peer, next to flannel.1's IPv4 ones. Then flannel-v6.1 deleted by hand comes back
 * with its entries (ours; upstream does not watch it), and a restarted daemon keeps both subnets. One
 * cluster for the class, in order.
 */
@Tag("e2e")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class EtcdDualStackClusterIT {
    @RegisterExtension
    static final ClusterPerClass CLUSTER = ClusterPerClass.of(ClusterOptions.defaults()
            .withDualStack(ClusterOptions.DEFAULT_IPV6_NETWORK));
    private final NetnsCluster cluster;

    EtcdDualStackClusterIT(NetnsCluster cluster) {
        this.cluster = cluster;
    }

    @Test
    @Order(1)
    void subnetEnvCarriesBothFamiliesAndEveryPodGotAnAddressOfEach() throws Exception {
        assertThat(cluster.pods()).hasSize(6);
        DualStack.assertSubnetEnvAndPodAddresses(cluster);
        for (ClusterNode n : cluster.nodes()) {
            // upstream's key of a dual-stack lease joins both subnets: 10.244.3.0-24&fd6a:f100:0:103::-64
            String lease = cluster.etcdGet(NetnsCluster.leaseKey(n.lease(), n.ipv6Lease()));
            assertThat(lease).as("%s lease in etcd", n.name())
                    .contains("\"PublicIP\":\"" + n.publicIp().getHostAddress() + "\"")
                    .contains("\"PublicIPv6\":\"" + ClusterNames.nodeIpv6(n.index()) + "\"")
                    .contains("\"BackendType\":\"vxlan\"").contains("\"BackendV6Data\":{\"VNI\":1,\"VtepMAC\":\"");
        }
    }

    @Test
    @Order(2)
    void everyPodReachesEveryOtherPodOverIpv4AndIpv6() throws Exception {
        DualStack.assertEveryPodReachesEveryOtherInBothFamilies(cluster);
    }

    @Test
    @Order(3)
    void tcpStreamsCrossOverIpv6BothWays() throws Exception {
        Pod a = MixedTraffic.podOn(cluster, 1);
        Pod b = MixedTraffic.podOn(cluster, 3);
        DualStack.assertIntactOverIpv6BothWays(a, b);
    }

    @Test
    @Order(4)
    void eachNodeHoldsBothDevicesWithExactlyOneEntryPerPeerAndFamily() throws Exception {
        DualStack.assertBothVtepsWithOneEntryPerPeer(cluster);
    }

    @Test
    @Order(5)
    void flannelV61DeletedByHandIsRecreatedWithEveryIpv6EntryWithin30Seconds() throws Exception {
        // Ours (REFERENCE §6.10): upstream watches only the IPv4 device, a deleted flannel-v6.1 goes unnoticed there
        ClusterNode node = cluster.node(2);
        int oldIndex = node.entriesV6().link().index();
        List<NodeLease> peers = cluster.ipv6Leases().stream().filter(l -> !l.node().equals(node.name())).toList();
        node.deleteVxlanV6Device();

        FlannelEntries back = Wait.until("flannel-v6.1 recreated on " + node.name() + " with entries for " + peers,
                Duration.ofSeconds(30), node::entriesV6, e -> e.linkPresent() && e.covers(peers));
        assertThat(back.link().index()).as("a new device").isNotEqualTo(oldIndex);
        DualStack.assertV6VtepAttributes(node);
        cluster.awaitConverged(); // its MAC may have changed: the peers follow the republished lease
        DualStack.assertExactlyOneV6EntryPerPeer(cluster);
        DualStack.assertEveryPodReachesEveryOther(cluster, Pod.Family.IPV6);
    }

    @Test
    @Order(6)
    void aRestartedDaemonKeepsBothSubnetsAndTheClusterConvergesInBothFamilies() throws Exception {
        ClusterNode node = cluster.node(3);
        NodeLease v4 = node.lease();
        NodeLease v6 = node.ipv6Lease();
        assertThat(node.stop()).as("flanneld exit code after SIGTERM").isZero();
        node.start();
        node.awaitReady();
        assertThat(node.lease().subnet()).as("IPv4 subnet after the restart").isEqualTo(v4.subnet());
        assertThat(node.ipv6Lease().subnet()).as("IPv6 subnet after the restart").isEqualTo(v6.subnet());
        cluster.awaitConverged();
        Overlay.assertExactlyOneEntryPerPeer(cluster);
        DualStack.assertExactlyOneV6EntryPerPeer(cluster);
        DualStack.assertEveryPodReachesEveryOtherInBothFamilies(cluster);
    }
}
