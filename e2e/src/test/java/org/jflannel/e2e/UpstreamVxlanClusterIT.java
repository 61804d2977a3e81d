package org.jflannel.e2e;

import org.jflannel.testsupport.cluster.ClusterPerClass;
import org.jflannel.testsupport.cluster.NetnsCluster;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@link UpstreamNodeClusterTests} on vxlan: upstream programs flannel.1 for our leases, ours for its. */
@Tag("e2e")
class UpstreamVxlanClusterIT extends UpstreamNodeClusterTests {
    @RegisterExtension
    static final ClusterPerClass CLUSTER = clusterOn("vxlan");

    UpstreamVxlanClusterIT(NetnsCluster cluster) {
        super(cluster);
    }
}
