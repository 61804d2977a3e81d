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
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A dual-stack wireguard etcd cluster (upstream's default Mode, separate: {@code flannel-wg} and
 * {@code flannel-wg-v6}) with node 2 running the real upstream flanneld v0.20.2 and its kernel
 * WireGuard, ours in kernel mode; in the kernel VM only ({@link UpstreamWireguardVmIT}). Upstream writes
 * a dual-stack wireguard lease, both families' ping matrices are full, and a checked TCP stream crosses
 * over IPv6 between its pod and one of ours, both ways.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class UpstreamWireguardDualStackClusterInVm {
    private static final int UPSTREAM_NODE = 2;
    @RegisterExtension
    static final ClusterPerClass CLUSTER = ClusterPerClass.of(ClusterOptions.defaults().withBackend("wireguard")
            .withDualStack(ClusterOptions.DEFAULT_IPV6_NETWORK).withUpstreamNodes(UPSTREAM_NODE));
    private final NetnsCluster cluster;

    UpstreamWireguardDualStackClusterInVm(NetnsCluster cluster) {
        this.cluster = cluster;
    }

    @Test
    @Order(1)
    void theUpstreamNodeWroteADualStackWireguardLease() throws Exception {
        ClusterNode upstream = cluster.node(UPSTREAM_NODE);
        assertThat(upstream.kind()).isEqualTo(NodeKind.UPSTREAM);
        String lease = cluster.etcdGet(NetnsCluster.leaseKey(upstream.lease(), upstream.ipv6Lease()));
        assertThat(lease).as("its lease in etcd")
                .contains("\"PublicIPv6\":\"" + ClusterNames.nodeIpv6(UPSTREAM_NODE) + "\"")
                .contains("\"BackendType\":\"wireguard\"").contains("\"BackendV6Data\":{\"PublicKey\":\"");
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
}
