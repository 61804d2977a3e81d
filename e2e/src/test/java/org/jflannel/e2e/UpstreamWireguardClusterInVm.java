package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import org.jflannel.testsupport.cluster.ClusterNode;
import org.jflannel.testsupport.cluster.ClusterPerClass;
import org.jflannel.testsupport.cluster.NetnsCluster;
import org.jflannel.testsupport.cluster.NodeKind;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link UpstreamNodeClusterTests} on wireguard, in the kernel VM only ({@link UpstreamWireguardVmIT}):
 * upstream flanneld v0.20.2's kernel WireGuard on node 2, ours in kernel mode (auto, the VM's kernel
 * has WireGuard) on nodes 1 and 3. Its name matches neither tier's pattern: the host's kernel has no
 * WireGuard, and upstream's backend needs it.
 */
class UpstreamWireguardClusterInVm extends UpstreamNodeClusterTests {
    @Test
    void oursRunWireguardInKernel() throws Exception {
        for (ClusterNode n : cluster.nodes()) {
            if (n.kind() == NodeKind.JFLANNEL) {
                assertThat(n.logSinceStart()).as(n.name()).contains("dataplane=kernel");
            }
        }
    }

    @RegisterExtension
    static final ClusterPerClass CLUSTER = clusterOn("wireguard");

    UpstreamWireguardClusterInVm(NetnsCluster cluster) {
        super(cluster);
    }
}
