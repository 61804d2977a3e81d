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

/**
 * A dual-stack etcd cluster whose node 2 runs the real upstream flanneld v0.20.2 beside ours on nodes 1
 * and 3, on one backend (each subclass): it finds its IPv6 address on eth0 as ours do, writes a dual-stack
 * lease (upstream's {@code <v4>&<v6>} key, the backend's data of both families) and subnet.env; both
 * families' ping matrices are full and a checked TCP stream crosses over IPv6 between its pod and one of
 * ours, both ways. One cluster for the class; a subclass adds its backend's own checks from order 4 on.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
abstract class UpstreamDualStackTests {
    static final int UPSTREAM_NODE = 2;
    final NetnsCluster cluster;

    UpstreamDualStackTests(NetnsCluster cluster) {
        this.cluster = cluster;
    }

    /** A subclass's cluster on {@code backend} (a type name). */
    static ClusterPerClass clusterOn(String backend) {
        return ClusterPerClass.of(ClusterOptions.defaults().withBackend(backend)
                .withDualStack(ClusterOptions.DEFAULT_IPV6_NETWORK).withUpstreamNodes(UPSTREAM_NODE));
    }

    /** What upstream's lease must say of the backend, e.g. {@code "BackendV6Data":{"VNI":1,"VtepMAC":"}. */
    abstract String[] upstreamLeaseSays();

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
                .contains("\"BackendType\":\"" + cluster.options().backendType() + "\"").contains(upstreamLeaseSays());
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
