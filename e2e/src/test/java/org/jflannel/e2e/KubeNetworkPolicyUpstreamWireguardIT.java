package org.jflannel.e2e;

import static org.jflannel.e2e.UpstreamNetpolCases.CIDR_EXCEPT;
import static org.jflannel.e2e.UpstreamNetpolCases.DEFAULT_DENY_ALL;
import static org.jflannel.e2e.UpstreamNetpolCases.NAMED_PORT_EGRESS;
import static org.jflannel.e2e.UpstreamNetpolCases.POD_AND_NAMESPACE_SELECTOR;
import static org.jflannel.e2e.UpstreamNetpolCases.PORTS;
import static org.jflannel.e2e.UpstreamNetpolCases.UDP_PORTS;

import java.util.LinkedHashSet;
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

/**
 * Upstream NetworkPolicy cases on a 3-node kube cluster on the wireguard backend (cross-node traffic through flannel-wg, WireGuard in userspace here (this kernel has none)),
 * IPv4: a selection (deny all, selectors ANDed, ports, a named port for egress, an ipBlock with except, UDP ports),
 * since the table's forward hook is the same for every backend and vxlan and host-gw run them all.
 */
@Tag("e2e")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class KubeNetworkPolicyUpstreamWireguardIT extends UpstreamNetworkPolicyCases {
    @RegisterExtension
    static final ClusterPerClass CLUSTER = ClusterPerClass.of(ClusterOptions.defaults().withMode(ClusterOptions.Mode.KUBE)
            .withBackend("wireguard").withPodsPerNode(3).withDaemonEnv(Map.of("FLANNELD_NETWORK_POLICY", "true")));

    KubeNetworkPolicyUpstreamWireguardIT(NetnsCluster cluster) {
        super(cluster);
    }

    @Override
    List<UpstreamNetpolCases.Case> cases() {
        return UpstreamNetpolCases.named(new LinkedHashSet<>(List.of(DEFAULT_DENY_ALL, POD_AND_NAMESPACE_SELECTOR, PORTS,
                NAMED_PORT_EGRESS, CIDR_EXCEPT, UDP_PORTS)));
    }
}
