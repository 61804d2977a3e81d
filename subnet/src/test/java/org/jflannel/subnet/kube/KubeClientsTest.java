package org.jflannel.subnet.kube;

import io.fabric8.kubernetes.client.KubernetesClient;
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
}
