package org.jflannel.e2e;

import static org.jflannel.e2e.UpstreamNetpolCases.CIDR_EGRESS;
import static org.jflannel.e2e.UpstreamNetpolCases.CIDR_EXCEPT;
import static org.jflannel.e2e.UpstreamNetpolCases.CIDR_OVERLAP;
import static org.jflannel.e2e.UpstreamNetpolCases.CLIENT_SIDE_EGRESS;
import static org.jflannel.e2e.UpstreamNetpolCases.DEFAULT_DENY_ALL;
import static org.jflannel.e2e.UpstreamNetpolCases.DEFAULT_DENY_INGRESS;
import static org.jflannel.e2e.UpstreamNetpolCases.NAMED_PORT_EGRESS;
import static org.jflannel.e2e.UpstreamNetpolCases.NAMESPACE_SELECTOR;
import static org.jflannel.e2e.UpstreamNetpolCases.POD_AND_NAMESPACE_SELECTOR;
import static org.jflannel.e2e.UpstreamNetpolCases.PORTS;
import static org.jflannel.e2e.UpstreamNetpolCases.UDP_DEFAULT_DENY_INGRESS;
import static org.jflannel.e2e.UpstreamNetpolCases.UDP_PORTS;
import static org.jflannel.e2e.UpstreamNetpolCases.UPDATED_POD;

import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import org.jflannel.testsupport.cluster.ClusterOptions;
import org.jflannel.testsupport.cluster.ClusterPerClass;
import org.jflannel.testsupport.cluster.NetnsCluster;
import org.jflannel.testsupport.cluster.Pod;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Upstream NetworkPolicy cases over IPv6 on a dual-stack 3-node kube cluster (vxlan): the pods carry an address
 * of each family, the probes go to their IPv6 ones, the ipBlock cases take the IPv6 address (/128, and the /4
 * around it, as upstream's {@code makeLargeCIDRForIP} does for an IPv6 pod). A selection: the selectors, ports,
 * named ports, UDP, the ipBlock cases and a label update.
 */
@Tag("e2e")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class KubeNetworkPolicyUpstreamIpv6IT extends UpstreamNetworkPolicyCases {
    @RegisterExtension
    static final ClusterPerClass CLUSTER = ClusterPerClass.of(ClusterOptions.defaults().withMode(ClusterOptions.Mode.KUBE)
            .withPodsPerNode(3).withDualStack(ClusterOptions.DEFAULT_IPV6_NETWORK)
            .withDaemonEnv(Map.of("FLANNELD_NETWORK_POLICY", "true")));

    KubeNetworkPolicyUpstreamIpv6IT(NetnsCluster cluster) {
        super(cluster);
    }

    @Override
    Pod.Family family() {
        return Pod.Family.IPV6;
    }

    @Override
    List<UpstreamNetpolCases.Case> cases() {
        return UpstreamNetpolCases.named(new LinkedHashSet<>(List.of(DEFAULT_DENY_INGRESS, DEFAULT_DENY_ALL, NAMESPACE_SELECTOR,
                POD_AND_NAMESPACE_SELECTOR, PORTS, NAMED_PORT_EGRESS, CLIENT_SIDE_EGRESS, CIDR_EGRESS, CIDR_EXCEPT, CIDR_OVERLAP,
                UDP_DEFAULT_DENY_INGRESS, UDP_PORTS, UPDATED_POD)));
    }
}
