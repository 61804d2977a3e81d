package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import org.jflannel.testsupport.cluster.ClusterNames;
import org.jflannel.testsupport.cluster.ClusterNode;
import org.jflannel.testsupport.cluster.ClusterOptions;
import org.jflannel.testsupport.cluster.ClusterPerClass;
import org.jflannel.testsupport.cluster.NetnsCluster;
import org.jflannel.testsupport.cluster.NodeKind;
import org.jflannel.testsupport.cluster.Pod;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The dual-stack vxlan etcd cluster of {@link EtcdDualStackClusterIT} with node 2 running the real
 * upstream flanneld v0.20.2: it finds its IPv6 address on eth0 as ours do, writes a dual-stack lease
 * (upstream's {@code <v4>&<v6>} key) and subnet.env, programs {@code flannel-v6.1} for our leases while
 * ours program it for its lease; both families' ping matrices are full and a checked TCP stream
 * crosses over IPv6 between its pod and one of ours, both ways. One cluster for the class.
 */
@Tag("e2e")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class UpstreamDualStackClusterIT {
    private static final int UPSTREAM_NODE = 2;
    @RegisterExtension
    static final ClusterPerClass CLUSTER = ClusterPerClass.of(ClusterOptions.defaults()
            .withDualStack(ClusterOptions.DEFAULT_IPV6_NETWORK).withUpstreamNodes(UPSTREAM_NODE));
    private final NetnsCluster cluster;

    UpstreamDualStackClusterIT(NetnsCluster cluster) {
        this.cluster = cluster;
    }

    @Test
    @Order(1)
    void theUpstreamNodeWroteADualStackLeaseAndSubnetEnv() throws Exception {
        ClusterNode upstream = cluster.node(UPSTREAM_NODE);
        assertThat(upstream.kind()).isEqualTo(NodeKind.UPSTREAM);
        assertThat(upstream.logSinceStart()).as("its log").contains("Wrote subnet file to " + upstream.subnetFile());
        String lease = cluster.etcdGet(NetnsCluster.leaseKey(upstream.lease(), upstream.ipv6Lease()));
        assertThat(lease).as("its lease in etcd")
                .contains("\"PublicIP\":\"" + ClusterNames.nodeIp(UPSTREAM_NODE) + "\"")
                .contains("\"PublicIPv6\":\"" + ClusterNames.nodeIpv6(UPSTREAM_NODE) + "\"")
                .contains("\"BackendType\":\"vxlan\"").contains("\"BackendV6Data\":{\"VNI\":1,\"VtepMAC\":\"");
        assertThat(cluster.pods()).hasSize(6);
        DualStack.assertSubnetEnvAndPodAddresses(cluster);
    }

    @Test
    @Order(2)
    void everyPodReachesEveryOtherPodOverIpv4AndIpv6() throws Exception {
        DualStack.assertEveryPodReachesEveryOtherInBothFamilies(cluster);
    }

    @Test
    @Order(3)
    void tcpStreamsCrossOverIpv6BetweenTheUpstreamNodesPodAndOneOfOursBothWays() throws Exception {
        Pod upstream = MixedTraffic.podOn(cluster, NodeKind.UPSTREAM);
        Pod ours = MixedTraffic.podOn(cluster, NodeKind.JFLANNEL);
        DualStack.assertIntactOverIpv6BothWays(ours, upstream);
    }

    @Test
    @Order(4)
    void everyNodeUpstreamsTooHoldsExactlyOneIpv6EntryPerPeerOnFlannelV61() throws Exception {
        for (ClusterNode n : cluster.nodes()) {
            DualStack.assertV6VtepAttributes(n);
        }
        Overlay.assertExactlyOneEntryPerPeer(cluster);
        DualStack.assertExactlyOneV6EntryPerPeer(cluster);
    }
}
