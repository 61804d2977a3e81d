package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import org.jflannel.testsupport.cluster.ClusterNode;
import org.jflannel.testsupport.cluster.ClusterPerClass;
import org.jflannel.testsupport.cluster.NetnsCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link UpstreamNodeClusterTests} on ipip, in the kernel VM only ({@link IpipClusterVmIT}): upstream
 * flanneld v0.20.2's ipip backend on node 2, ours on nodes 1 and 3. Its name matches neither tier's
 * pattern: the host's kernel has no ipip.
 */
class UpstreamIpipClusterInVm extends UpstreamNodeClusterTests {
    @Test
    void everyNodeHoldsAnOnlinkRouteThroughFlannelIpipPerPeer() throws Exception {
        for (ClusterNode n : cluster.nodes()) {
            var dev = n.ipipDevice();
            assertThat(dev.link().kind()).as(n.name()).isEqualTo("ipip");
            for (var peer : cluster.leases()) {
                if (!peer.node().equals(n.name())) {
                    assertThat(dev.routesTo(peer.subnet())).as(n.name() + " -> " + peer.subnet())
                            .singleElement().satisfies(r -> assertThat(r.onlink()).isTrue());
                }
            }
        }
    }

    @RegisterExtension
    static final ClusterPerClass CLUSTER = clusterOn("ipip");

    UpstreamIpipClusterInVm(NetnsCluster cluster) {
        super(cluster);
    }
}
