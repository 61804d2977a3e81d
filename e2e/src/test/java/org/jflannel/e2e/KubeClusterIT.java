package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.OptionalInt;
import java.util.Set;
import org.jflannel.testsupport.cluster.ClusterNode;
import org.jflannel.testsupport.cluster.ClusterOptions;
import org.jflannel.testsupport.cluster.ClusterPerClass;
import org.jflannel.testsupport.cluster.ClusterOptions.Mode;
import org.jflannel.testsupport.cluster.ManagedProcess;
import org.jflannel.testsupport.cluster.NetnsCluster;
import org.jflannel.testsupport.cluster.NodeLease;
import org.jflannel.testsupport.cluster.Wait;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The 3-node cluster in Kubernetes mode: flanneld with {@code --kube-subnet-mgr} against fabric8's
 * mock API server run as a process (with the test-support dispatcher that patches Nodes as a real
 * API server does), Nodes created with podCIDRs as the controller manager would.
 */
@Tag("e2e")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class KubeClusterIT {
    private static final String PREFIX = "flannel.alpha.coreos.com/";
    private static final ObjectMapper JSON = new ObjectMapper();

    @RegisterExtension
    static final ClusterPerClass CLUSTER = ClusterPerClass.of(ClusterOptions.defaults().withMode(Mode.KUBE));
    private final NetnsCluster cluster;

    KubeClusterIT(NetnsCluster cluster) {
        this.cluster = cluster;
    }

    @Test
    @Order(1)
    void eachNodeGetsFlannelAnnotationsAndNetworkUnavailableFalseWhileReadySurvives() throws Exception {
        for (ClusterNode n : cluster.nodes()) {
            JsonNode node = Wait.until("NetworkUnavailable on " + n.name(), Duration.ofSeconds(15),
                    () -> cluster.kubeNode(n.name()), j -> condition(j, "NetworkUnavailable") != null);
            JsonNode annotations = node.path("metadata").path("annotations");
            assertThat(annotations.path(PREFIX + "kube-subnet-manager").asText()).isEqualTo("true");
            assertThat(annotations.path(PREFIX + "backend-type").asText()).isEqualTo("vxlan");
            assertThat(annotations.path(PREFIX + "public-ip").asText()).isEqualTo(n.publicIp().getHostAddress());
            JsonNode backendData = JSON.readTree(annotations.path(PREFIX + "backend-data").asText());
            assertThat(backendData.path("VNI").asInt()).isEqualTo(1);
            assertThat(backendData.path("VtepMAC").asText()).isEqualTo(n.entries().link().mac().toString());

            JsonNode unavailable = condition(node, "NetworkUnavailable");
            assertThat(unavailable.path("status").asText()).isEqualTo("False");
            assertThat(unavailable.path("reason").asText()).isEqualTo("FlannelIsUp");
            assertThat(unavailable.path("message").asText()).isEqualTo("Flannel is running on this node");
            JsonNode ready = condition(node, "Ready");
            assertThat(ready).as("Ready condition of %s after flannel's status patches", n.name()).isNotNull();
            assertThat(ready.path("status").asText()).isEqualTo("True");
            assertThat(ready.path("reason").asText()).isEqualTo("KubeletReady");
            assertThat(node.path("spec").path("podCIDR").asText()).as("spec untouched")
                    .isEqualTo(n.lease().subnet());
        }
    }

    @Test
    @Order(2)
    void leasesAreTheNodesPodCidrsAndPodsPingAcross() throws Exception {
        for (ClusterNode n : cluster.nodes()) {
            assertThat(n.lease().subnet()).isEqualTo(cluster.kubeNode(n.name()).path("spec").path("podCIDR").asText());
        }
        Overlay.assertExactlyOneEntryPerPeer(cluster);
        Overlay.assertEveryPodReachesEveryOther(cluster);
    }

    @Test
    @Order(3)
    void daemonsStayWithinKubeFlannelsRbacAndPatchNodeStatusWithStrategicMerge() throws Exception {
        JsonNode calls = cluster.kubeApiCalls();
        List<JsonNode> resourceCalls = new java.util.ArrayList<>();
        calls.forEach(c -> {
            if (!c.path("resource").asText().isEmpty()) { // discovery and /version are not RBAC resources
                resourceCalls.add(c);
            }
        });
        // REFERENCE §10: pods get; nodes get, list, watch; nodes/status patch
        Set<String> allowed = Set.of("get pods", "get nodes", "list nodes", "watch nodes", "patch nodes/status");
        assertThat(resourceCalls).as("requests from the daemons").isNotEmpty()
                .allSatisfy(c -> assertThat(c.path("verb").asText() + " " + c.path("resource").asText())
                        .as("request %s", c).isIn(allowed));
        List<JsonNode> patches = resourceCalls.stream().filter(c -> c.path("verb").asText().equals("patch")).toList();
        assertThat(patches).extracting(c -> c.path("name").asText())
                .as("each node patched its own status (annotations, then NetworkUnavailable)")
                .contains("node1", "node2", "node3");
        assertThat(patches).allSatisfy(c -> assertThat(c.path("contentType").asText())
                .startsWith("application/strategic-merge-patch+json"));
    }

    @Test
    @Order(4)
    void malformedNetConfMakesFlanneldExit1NamingTheField() throws Exception {
        ClusterNode node = cluster.node(3);
        assertThat(node.stop()).as("flanneld exit code after SIGTERM").isZero();
        Path bad = cluster.runDir().resolve("bad-net-conf.json");
        Files.writeString(bad, "{\"Network\":\"10.244.0.0/16\",\"Backend\":{\"Type\":\"vxlan\",\"VNI\":\"x\"}}",
                StandardCharsets.UTF_8);
        try {
            ManagedProcess p = node.start("--net-config-path=" + bad);
            OptionalInt exit = p.awaitExit(Duration.ofSeconds(60));
            assertThat(exit).as("flanneld exit with a malformed net-conf.json; log:\n%s", node.logSinceStart())
                    .hasValue(1);
            assertThat(node.logSinceStart()).contains("error parsing subnet config").contains("Backend.VNI");
        } finally {
            node.start();
            node.awaitReady();
        }
        cluster.awaitConverged();
    }

    @Test
    @Order(5)
    void deletedNodeHasItsEntriesRemovedFromTheOthers() throws Exception {
        ClusterNode victim = cluster.node(3);
        NodeLease lease = victim.lease();
        List<ClusterNode> others = List.of(cluster.node(1), cluster.node(2));
        for (ClusterNode other : others) {
            assertThat(other.entries().free(lease)).as("entries of %s on %s before", lease.subnet(), other.name())
                    .isFalse();
        }
        victim.stop();
        cluster.deleteKubeNode(victim.name());

        for (ClusterNode other : others) {
            Wait.until("entries of " + lease.subnet() + " gone from " + other.name(), Duration.ofSeconds(15),
                    () -> other.entries().free(lease));
        }
    }

    private static JsonNode condition(JsonNode node, String type) {
        for (JsonNode c : node.path("status").path("conditions")) {
            if (type.equals(c.path("type").asText())) {
                return c;
            }
        }
        return null;
    }
}
