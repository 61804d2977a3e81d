package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.jflannel.testsupport.cluster.ClusterOptions;
import org.jflannel.testsupport.cluster.ClusterNode;
import org.jflannel.testsupport.cluster.ClusterPerClass;
import org.jflannel.testsupport.cluster.NetnsCluster;
import org.jflannel.testsupport.cluster.NodeKind;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link UpstreamNodeClusterTests} on wireguard, in the kernel VM only ({@link UpstreamWireguardVmIT}):
 * upstream flanneld v0.20.2's kernel WireGuard on node 2, ours on nodes 1 and 3 running WireGuard in
 * userspace ({@code JFLANNEL_WG_DATAPLANE=userspace}), as on a host without WireGuard in its kernel.
 */
class UpstreamWireguardUserspaceClusterInVm extends UpstreamNodeClusterTests {
    @Test
    void oursRunWireguardInUserspace() throws Exception {
        for (ClusterNode n : cluster.nodes()) {
            if (n.kind() == NodeKind.JFLANNEL) {
                assertThat(n.logSinceStart()).as(n.name()).contains("dataplane=userspace");
            }
        }
    }

    @RegisterExtension
    static final ClusterPerClass CLUSTER = ClusterPerClass.of(ClusterOptions.defaults().withBackend("wireguard")
            .withUpstreamNodes(UPSTREAM_NODE).withDaemonEnv(Map.of("JFLANNEL_WG_DATAPLANE", "userspace")));

    UpstreamWireguardUserspaceClusterInVm(NetnsCluster cluster) {
        super(cluster);
    }
}
