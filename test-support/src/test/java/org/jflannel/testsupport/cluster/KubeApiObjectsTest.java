package org.jflannel.testsupport.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.client.KubernetesClient;
import org.jflannel.testsupport.kube.KubeMockServer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The stand-in's generic object commands, as a network-policy test drives them: create, replace, delete. */
class KubeApiObjectsTest {
    private KubeMockServer server;
    private KubernetesClient client;

    @BeforeEach
    void start() {
        server = KubeMockServer.start(java.net.InetAddress.getLoopbackAddress(), 0, KubeMockServer.BOOKMARK_EVERY);
        client = server.newClient();
    }

    @AfterEach
    void stop() {
        client.close();
        server.close();
    }

    @Test
    void aPodIsCreatedThenReplacedAndAPolicyCreatedThenDeletedWhileInformersWatchThem() throws Exception {
        var pods = client.pods().inAnyNamespace().inform();
        var policies = client.network().v1().networkPolicies().inAnyNamespace().inform();
        String pod = "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"a\",\"namespace\":\"x\",\"labels\":{\"role\":\"web\"}},"
                + "\"spec\":{\"nodeName\":\"node1\",\"containers\":[{\"name\":\"c\",\"image\":\"none\"}]},\"status\":{\"podIP\":\"10.244.1.2\"}}";
        assertThat(KubeApiServerMain.answer(client, server, "apply-json " + pod)).startsWith("ok ");
        String relabelled = pod.replace("\"role\":\"web\"", "\"role\":\"batch\"");
        assertThat(KubeApiServerMain.answer(client, server, "apply-json " + relabelled)).startsWith("ok ");
        assertThat(client.pods().inNamespace("x").withName("a").get().getMetadata().getLabels()).containsEntry("role", "batch");

        String np = "{\"apiVersion\":\"networking.k8s.io/v1\",\"kind\":\"NetworkPolicy\",\"metadata\":{\"name\":\"p\",\"namespace\":\"x\"},"
                + "\"spec\":{\"podSelector\":{}}}";
        assertThat(KubeApiServerMain.answer(client, server, "apply-json " + np)).startsWith("ok ");
        assertThat(client.network().v1().networkPolicies().inNamespace("x").list().getItems()).hasSize(1);
        assertThat(KubeApiServerMain.answer(client, server, "delete-json " + np)).isEqualTo("ok");
        assertThat(client.network().v1().networkPolicies().inNamespace("x").list().getItems()).isEmpty();
        pods.stop();
        policies.stop();
    }
}
