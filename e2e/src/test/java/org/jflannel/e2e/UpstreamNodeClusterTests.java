package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import org.jflannel.testsupport.cluster.ClusterNode;
import org.jflannel.testsupport.cluster.ClusterOptions;
import org.jflannel.testsupport.cluster.ClusterPerClass;
import org.jflannel.testsupport.cluster.NetnsCluster;
import org.jflannel.testsupport.cluster.NodeKind;
import org.jflannel.testsupport.cluster.Pod;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * A 3-node etcd cluster whose node 2 runs the real upstream flanneld v0.20.2 beside ours on nodes 1
 * and 3, on one backend (each subclass): the harness starts it as any node, it writes its own lease
 * and subnet.env, our CNI plugin attaches its pods, and the cluster converges (every node, upstream's
 * too, holds the kernel entries of every peer). Then every pod reaches every other, and a checked TCP
 * stream crosses between an upstream-node pod and one of ours, both ways.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
abstract class UpstreamNodeClusterTests {
    static final int UPSTREAM_NODE = 2;
    final NetnsCluster cluster;

    UpstreamNodeClusterTests(NetnsCluster cluster) {
        this.cluster = cluster;
    }

    /** A subclass's cluster: {@code backend} a type name, or the whole backend object as JSON (the harness takes either). */
    static ClusterPerClass clusterOn(String backend) {
        return ClusterPerClass.of(ClusterOptions.defaults().withBackend(backend).withUpstreamNodes(UPSTREAM_NODE));
    }

    @Test
    void theUpstreamNodeRunsUpstreamAndWroteItsOwnLease() throws Exception {
        ClusterNode upstream = cluster.node(UPSTREAM_NODE);
        assertThat(upstream.kind()).isEqualTo(NodeKind.UPSTREAM);
        assertThat(upstream.logSinceStart()).as("its log").contains("Wrote subnet file to " + upstream.subnetFile());
        String lease = cluster.etcdGet(NetnsCluster.leaseKey(upstream.lease()));
        String type = cluster.options().backendType();
        assertThat(lease).as("its lease in etcd").contains("\"BackendType\":\"" + type + "\"")
                .contains("\"PublicIP\":\"" + upstream.publicIp().getHostAddress() + "\"");
    }

    @Test
    void everyPodReachesEveryOtherPod() throws Exception {
        assertThat(cluster.pods()).hasSize(6);
        Overlay.assertEveryPodReachesEveryOther(cluster);
    }

    @Test
    void tcpStreamsCrossBetweenAnUpstreamNodePodAndOneOfOursBothWays() throws Exception {
        Pod upstream = MixedTraffic.podOn(cluster, NodeKind.UPSTREAM);
        Pod ours = MixedTraffic.podOn(cluster, NodeKind.JFLANNEL);
        MixedTraffic.assertIntact(ours, upstream);
        MixedTraffic.assertIntact(upstream, ours);
    }
}
