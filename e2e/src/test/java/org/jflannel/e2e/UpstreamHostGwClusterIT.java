package org.jflannel.e2e;

import org.jflannel.testsupport.cluster.ClusterPerClass;
import org.jflannel.testsupport.cluster.NetnsCluster;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@link UpstreamNodeClusterTests} on host-gw: upstream routes our subnets via our addresses on eth0, ours its. */
@Tag("e2e")
class UpstreamHostGwClusterIT extends UpstreamNodeClusterTests {
    @RegisterExtension
    static final ClusterPerClass CLUSTER = clusterOn("host-gw");

    UpstreamHostGwClusterIT(NetnsCluster cluster) {
        super(cluster);
    }
}
