package org.jflannel.testsupport.kube;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.NodeCondition;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class NodeAwareCrudDispatcherTest {

    private static final PatchContext SMP = PatchContext.of(PatchType.STRATEGIC_MERGE);
    private static final PatchContext MERGE = PatchContext.of(PatchType.JSON_MERGE);

    private KubeMockServer server;
    private KubernetesClient client;

    @BeforeEach
    void start() {
        server = KubeMockServer.start();
        client = server.newClient();
        client.nodes().resource(new NodeBuilder()
                .withNewMetadata().withName("n1").addToAnnotations("keep", "me").addToAnnotations("drop", "x")
                .addToLabels("role", "worker").endMetadata()
                .withNewSpec().withPodCIDR("10.244.1.0/24").endSpec()
                .withNewStatus()
                .addNewCondition().withType("Ready").withStatus("True").withReason("KubeletReady").endCondition()
                .addNewCondition().withType("MemoryPressure").withStatus("False").withReason("KubeletHasSufficientMemory").endCondition()
                .endStatus().build()).create();
    }

    @AfterEach
    void stop() {
        client.close();
        server.close();
    }

    private Node node() {
        return client.nodes().withName("n1").get();
    }

    private static Map<String, String> conditions(Node n) {
        return n.getStatus().getConditions().stream()
                .collect(java.util.stream.Collectors.toMap(NodeCondition::getType, NodeCondition::getStatus));
    }

    @Test
    void networkUnavailablePatchToStatusKeepsTheOtherConditions() {
        client.nodes().withName("n1").subresource("status").patch(SMP, """
                {"status":{"conditions":[{"type":"NetworkUnavailable","status":"False","reason":"FlannelIsUp",\
                "message":"Flannel is running on this node"}]}}""");

        assertThat(conditions(node())).containsExactlyInAnyOrderEntriesOf(Map.of(
                "Ready", "True", "MemoryPressure", "False", "NetworkUnavailable", "False"));
    }

    @Test
    void conditionOfAnExistingTypeIsMergedInPlace() {
        client.nodes().withName("n1").subresource("status").patch(SMP,
                "{\"status\":{\"conditions\":[{\"type\":\"Ready\",\"status\":\"False\"}]}}");

        Node n = node();
        assertThat(conditions(n)).containsExactlyInAnyOrderEntriesOf(Map.of("Ready", "False", "MemoryPressure", "False"));
        assertThat(n.getStatus().getConditions().get(0).getReason()).isEqualTo("KubeletReady");
    }

    @Test
    void annotationsSentToStatusAreMergedNotReplacedAndNullDeletes() {
        client.nodes().withName("n1").subresource("status").patch(SMP,
                "{\"metadata\":{\"annotations\":{\"new\":\"1\",\"drop\":null},\"labels\":{\"zone\":\"a\"}}}");

        Node n = node();
        assertThat(n.getMetadata().getAnnotations()).containsExactlyInAnyOrderEntriesOf(Map.of("keep", "me", "new", "1"));
        assertThat(n.getMetadata().getLabels()).containsExactlyInAnyOrderEntriesOf(Map.of("role", "worker", "zone", "a"));
    }

    @Test
    void statusSubresourceIgnoresSpecChangesAndKeepsIdentity() {
        Node before = node();
        client.nodes().withName("n1").subresource("status").patch(SMP,
                "{\"spec\":{\"podCIDR\":\"10.9.9.0/24\"},\"metadata\":{\"annotations\":{\"a\":\"b\"}}}");

        Node after = node();
        assertThat(after.getSpec().getPodCIDR()).isEqualTo("10.244.1.0/24");
        assertThat(after.getMetadata().getUid()).isEqualTo(before.getMetadata().getUid());
        assertThat(Long.parseLong(after.getMetadata().getResourceVersion()))
                .isGreaterThan(Long.parseLong(before.getMetadata().getResourceVersion()));
    }

    @Test
    void jsonMergePatchToStatusReplacesTheConditionListAsARealServerDoes() {
        client.nodes().withName("n1").subresource("status").patch(MERGE,
                "{\"metadata\":{\"annotations\":{\"m\":\"1\"}},\"status\":{\"conditions\":[{\"type\":\"NetworkUnavailable\",\"status\":\"False\"}]}}");

        Node n = node();
        assertThat(conditions(n)).containsExactlyEntriesOf(Map.of("NetworkUnavailable", "False"));
        assertThat(n.getMetadata().getAnnotations()).containsEntry("m", "1").containsEntry("keep", "me");
    }

    @Test
    void strategicMergePatchOnTheNodeItselfKeepsStatus() {
        client.nodes().withName("n1").patch(SMP,
                "{\"spec\":{\"unschedulable\":true},\"status\":{\"conditions\":[]}}");

        Node n = node();
        assertThat(n.getSpec().getUnschedulable()).isTrue();
        assertThat(n.getStatus().getConditions()).hasSize(2);
    }

    @Test
    void patchOfAMissingNodeIsNotFound() {
        assertThatThrownBy(() -> client.nodes().withName("ghost").subresource("status").patch(SMP, "{\"metadata\":{}}"))
                .isInstanceOfSatisfying(KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(404));
    }

    @Test
    void recordsVerbResourceAndSubresourceOfEveryCall() {
        server.clearCalls();
        node();
        client.nodes().list();
        client.nodes().withName("n1").subresource("status").patch(SMP, "{\"metadata\":{\"annotations\":{\"x\":\"y\"}}}");

        // fabric8's patch() of a subresource reads the object first: a third "get nodes"
        assertThat(server.calls()).extracting(ApiCall::verb, ApiCall::rbacResource)
                .containsExactly(
                        org.assertj.core.groups.Tuple.tuple("get", "nodes"),
                        org.assertj.core.groups.Tuple.tuple("list", "nodes"),
                        org.assertj.core.groups.Tuple.tuple("get", "nodes"),
                        org.assertj.core.groups.Tuple.tuple("patch", "nodes/status"));
        ApiCall patch = server.calls().get(3);
        assertThat(patch.contentType()).startsWith("application/strategic-merge-patch+json");
        assertThat(patch.name()).isEqualTo("n1");
        assertThat(patch.body()).isEqualTo("{\"metadata\":{\"annotations\":{\"x\":\"y\"}}}");
    }

    @Test
    void kubeconfigWriterPointsAClientAtTheServer(@TempDir Path dir) throws Exception {
        Path file = server.writeKubeconfig(dir.resolve("kubeconfig"));

        Config config = Config.fromKubeconfig(Files.readString(file));
        try (KubernetesClient other = new KubernetesClientBuilder().withConfig(config).build()) {
            assertThat(other.nodes().withName("n1").get().getSpec().getPodCIDR()).isEqualTo("10.244.1.0/24");
        }
    }
}
