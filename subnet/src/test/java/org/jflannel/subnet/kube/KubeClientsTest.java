package org.jflannel.subnet.kube;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.api.model.WatchEvent;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import org.jflannel.testsupport.kube.KubeMockServer;
import org.jflannel.testsupport.kube.KubeconfigWriter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** API access as upstream's BuildConfigFromFlags (REFERENCE §4.1). */
class KubeClientsTest {

    @Test
    void kubeconfigFileAndApiUrlOverridingItsServer(@TempDir Path dir) throws Exception {
        try (KubeMockServer server = KubeMockServer.start()) {
            Path good = KubeconfigWriter.write(dir.resolve("good"), server.url());
            Path wrong = KubeconfigWriter.write(dir.resolve("wrong"), "http://127.0.0.1:9");

            try (KubernetesClient a = KubeClients.connect(KubeOptions.defaults().withApiAccess(good.toString(), ""), Map.of());
                 KubernetesClient b = KubeClients.connect(KubeOptions.defaults().withApiAccess(wrong.toString(), server.url()), Map.of());
                 KubernetesClient c = KubeClients.connect(KubeOptions.defaults().withApiAccess("", server.url()), Map.of())) {
                for (KubernetesClient client : new KubernetesClient[] {a, b, c}) {
                    assertThat(client.nodes().list().getItems()).isEmpty();
                }
            }
        }
    }

    @Test
    void withNeitherOutsideAPodItIsUpstreamsInClusterError() {
        assertThatThrownBy(() -> KubeClients.connect(KubeOptions.defaults(), Map.of()))
                .hasMessage("unable to load in-cluster configuration, KUBERNETES_SERVICE_HOST and KUBERNETES_SERVICE_PORT must be defined");
    }

    @Test
    void unreadableKubeconfigIsAnError(@TempDir Path dir) {
        assertThatThrownBy(() -> KubeClients.connect(KubeOptions.defaults().withApiAccess(dir.resolve("none").toString(), ""), Map.of()))
                .hasMessageContaining("cannot be read");
    }

    @Test
    void serializationReadsWatchEventsOfTheKindsWeUseWithoutScanningTheModel() {
        KubernetesSerialization json = KubeClients.serialization();
        WatchEvent node = json.unmarshal("{\"type\":\"ADDED\",\"object\":{\"apiVersion\":\"v1\",\"kind\":\"Node\","
                + "\"metadata\":{\"name\":\"n1\",\"resourceVersion\":\"7\"},\"spec\":{\"podCIDR\":\"10.244.1.0/24\"}}}",
                WatchEvent.class);
        assertThat(node.getObject()).isInstanceOfSatisfying(Node.class,
                n -> assertThat(n.getSpec().getPodCIDR()).isEqualTo("10.244.1.0/24"));
        WatchEvent error = json.unmarshal("{\"type\":\"ERROR\",\"object\":{\"apiVersion\":\"v1\",\"kind\":\"Status\","
                + "\"code\":410,\"reason\":\"Expired\"}}", WatchEvent.class);
        assertThat(error.getObject()).isInstanceOfSatisfying(Status.class, st -> assertThat(st.getCode()).isEqualTo(410));
        // an unregistered kind stays generic: the ~500 other model classes were not looked up
        assertThat(json.getRegisteredKubernetesResource("v1", "ConfigMap")).isNull();
        WatchEvent other = json.unmarshal("{\"type\":\"ADDED\",\"object\":{\"apiVersion\":\"gateway.networking.k8s.io/v1\","
                + "\"kind\":\"Gateway\",\"metadata\":{\"name\":\"g\"}}}", WatchEvent.class);
        assertThat(other.getObject()).isInstanceOf(GenericKubernetesResource.class);
    }
}
