package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import org.jflannel.testsupport.cluster.ClusterNode;
import org.jflannel.testsupport.cluster.ClusterOptions;
import org.jflannel.testsupport.cluster.ClusterPerClass;
import org.jflannel.testsupport.cluster.Cmd;
import org.jflannel.testsupport.cluster.NetnsCluster;
import org.jflannel.testsupport.cluster.NodeKind;
import org.jflannel.testsupport.cluster.Pod;
import org.jflannel.testsupport.cluster.Wait;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A mixed ipsec cluster, in the kernel VM only ({@link UpstreamIpsecVmIT}): upstream flanneld v0.20.2 on node 2
 * (its charon from Debian's strongSwan with the distribution's strongswan.conf, its socket and pidfile in the VM's
 * /run, as upstream runs it), ours on nodes 1 and 3 (each charon in its own /run). Every node is given a default
 * route via the fabric, which upstream's ipsec relies on. NOT YET RUN: this project's machine has no upstream
 * binaries (JFLANNEL_UPSTREAM_DIR); docs/ipsec.md says so.
 */
class UpstreamIpsecClusterInVm {
    static final int UPSTREAM_NODE = 2;

    @RegisterExtension
    static final ClusterPerClass CLUSTER = ClusterPerClass.of(ClusterOptions.defaults().withBackend(EtcdIpsecNodeIT.BACKEND)
            .withUpstreamNodes(UPSTREAM_NODE));
    private final NetnsCluster cluster;

    UpstreamIpsecClusterInVm(NetnsCluster cluster) {
        this.cluster = cluster;
    }

    @Test
    void everyPodReachesEveryOtherPodAndTcpCrossesBothWays() throws Exception {
        assertMixedClusterWorks(cluster);
    }

    /** Upstream's lease, then the ping matrix and a TCP stream both ways between upstream's pod and ours. */
    static void assertMixedClusterWorks(NetnsCluster cluster) throws Exception {
        ClusterNode upstream = cluster.node(UPSTREAM_NODE);
        assertThat(upstream.kind()).isEqualTo(NodeKind.UPSTREAM);
        assertThat(cluster.etcdGet(NetnsCluster.leaseKey(upstream.lease()))).contains("\"BackendType\":\"ipsec\"");
        for (ClusterNode n : cluster.nodes()) {
            Cmd.run(Duration.ofSeconds(30), List.of("ip", "-n", n.namespace(), "route", "replace", "default", "via", "192.0.2.1"));
        }
        Wait.until("every pod reaching every other over ipsec", Duration.ofMinutes(4),
                () -> cluster.pingMatrix().failures().isEmpty());
        Overlay.assertEveryPodReachesEveryOther(cluster);
        Pod theirs = MixedTraffic.podOn(cluster, NodeKind.UPSTREAM);
        Pod ours = MixedTraffic.podOn(cluster, NodeKind.JFLANNEL);
        MixedTraffic.assertIntact(ours, theirs);
        MixedTraffic.assertIntact(theirs, ours);
    }
}
