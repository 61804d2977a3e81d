package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.time.Duration;
import org.jflannel.testsupport.cluster.ClusterNames;
import org.jflannel.testsupport.cluster.ClusterNode;
import org.jflannel.testsupport.cluster.ClusterOptions;
import org.jflannel.testsupport.cluster.ClusterOptions.Mode;
import org.jflannel.testsupport.cluster.ClusterPerClass;
import org.jflannel.testsupport.cluster.NetnsCluster;
import org.jflannel.testsupport.cluster.Pod;
import org.jflannel.testsupport.cluster.Wait;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The dual-stack vxlan cluster in kube mode, against the mock API server: each Node has
 * {@code spec.podCIDRs} of both families (IPv4 first) and an InternalIP of each. flanneld takes each
 * family's lease from them, annotates its Node with upstream's IPv6 annotations ({@code public-ipv6},
 * {@code backend-v6-data} with the MAC of {@code flannel-v6.1}), and every node programs the others'
 * IPv6 leases from those annotations: both families' ping matrices are full, a checked TCP stream
 * crosses over IPv6 both ways, one IPv6 neighbour, FDB entry and route per peer. One cluster for the class.
 */
@Tag("e2e")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class KubeDualStackClusterIT {
    private static final String PREFIX = "flannel.alpha.coreos.com/";
    private static final ObjectMapper JSON = new ObjectMapper();

    @RegisterExtension
    static final ClusterPerClass CLUSTER = ClusterPerClass.of(ClusterOptions.defaults().withMode(Mode.KUBE)
            .withDualStack(ClusterOptions.DEFAULT_IPV6_NETWORK));
    private final NetnsCluster cluster;

    KubeDualStackClusterIT(NetnsCluster cluster) {
        this.cluster = cluster;
    }

    @Test
    @Order(1)
    void leasesAreTheNodesPodCidrsOfBothFamiliesAndNodesCarryUpstreamsIpv6Annotations() throws Exception {
        assertThat(cluster.pods()).hasSize(6);
        DualStack.assertSubnetEnvAndPodAddresses(cluster);
        for (ClusterNode n : cluster.nodes()) {
            JsonNode node = Wait.until("flannel's IPv6 annotations on " + n.name(), Duration.ofSeconds(15),
                    () -> cluster.kubeNode(n.name()), j -> j.path("metadata").path("annotations").has(PREFIX + "backend-v6-data"));
            JsonNode cidrs = node.path("spec").path("podCIDRs");
            assertThat(cidrs.size()).as("%s podCIDRs", n.name()).isEqualTo(2);
            assertThat(cidrs.get(0).asText()).as("%s IPv4 lease = podCIDRs[0]", n.name()).isEqualTo(n.lease().subnet());
            assertThat(cidrs.get(1).asText()).as("%s IPv6 lease = podCIDRs[1]", n.name()).isEqualTo(n.ipv6Lease().subnet());
            JsonNode annotations = node.path("metadata").path("annotations");
            assertThat(annotations.path(PREFIX + "public-ip").asText()).isEqualTo(ClusterNames.nodeIp(n.index()));
            assertThat(annotations.path(PREFIX + "public-ipv6").asText()).isEqualTo(ClusterNames.nodeIpv6(n.index()));
            assertThat(annotations.path(PREFIX + "backend-type").asText()).isEqualTo("vxlan");
            JsonNode v6Data = JSON.readTree(annotations.path(PREFIX + "backend-v6-data").asText());
            assertThat(v6Data.path("VNI").asInt()).isEqualTo(1);
            assertThat(v6Data.path("VtepMAC").asText()).as("%s backend-v6-data VtepMAC", n.name())
                    .isEqualTo(n.entriesV6().link().mac().toString());
            JsonNode v4Data = JSON.readTree(annotations.path(PREFIX + "backend-data").asText());
            assertThat(v4Data.path("VtepMAC").asText()).isEqualTo(n.entries().link().mac().toString());
        }
    }

    @Test
    @Order(2)
    void everyPodReachesEveryOtherPodOverIpv4AndIpv6() throws Exception {
        DualStack.assertEveryPodReachesEveryOtherInBothFamilies(cluster);
    }

    @Test
    @Order(3)
    void tcpStreamsCrossOverIpv6BothWays() throws Exception {
        Pod a = MixedTraffic.podOn(cluster, 2);
        Pod b = MixedTraffic.podOn(cluster, 3);
        DualStack.assertIntactOverIpv6BothWays(a, b);
    }

    @Test
    @Order(4)
    void eachNodeHoldsBothDevicesWithExactlyOneEntryPerPeerAndFamily() throws Exception {
        DualStack.assertBothVtepsWithOneEntryPerPeer(cluster);
    }
}
