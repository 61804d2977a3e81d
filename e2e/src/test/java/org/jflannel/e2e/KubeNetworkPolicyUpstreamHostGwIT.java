package org.jflannel.e2e;

import java.util.List;
import java.util.Map;
import org.jflannel.testsupport.cluster.ClusterOptions;
import org.jflannel.testsupport.cluster.ClusterPerClass;
import org.jflannel.testsupport.cluster.NetnsCluster;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Every upstream NetworkPolicy case ({@link UpstreamNetpolCases}) on a 3-node kube cluster on host-gw, IPv4. */
@Tag("e2e")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class KubeNetworkPolicyUpstreamHostGwIT extends UpstreamNetworkPolicyCases {
    @RegisterExtension
    static final ClusterPerClass CLUSTER = ClusterPerClass.of(ClusterOptions.defaults().withMode(ClusterOptions.Mode.KUBE)
            .withBackend("host-gw").withPodsPerNode(3).withDaemonEnv(Map.of("FLANNELD_NETWORK_POLICY", "true")));

    KubeNetworkPolicyUpstreamHostGwIT(NetnsCluster cluster) {
        super(cluster);
    }

    @Override
    List<UpstreamNetpolCases.Case> cases() {
        return UpstreamNetpolCases.all();
    }
}
