package org.jflannel.testsupport.kube;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** The mock API server as a separate process, as the end-to-end tests run it. */
class KubeMockServerProcessTest {

    @Test
    void mainServesUntilStdinClosesAndWritesAKubeconfig(@TempDir Path dir) throws Exception {
        Path kubeconfig = dir.resolve("kubeconfig");
        String java = ProcessHandle.current().info().command().orElse("java");
        Process p = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
                KubeMockServer.class.getName(), "0", kubeconfig.toString())
                .redirectError(dir.resolve("stderr").toFile()).start();
        try {
            BufferedReader out = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
            String url = out.readLine();
            String written = out.readLine();

            assertThat(url).matches("url=http://127\\.0\\.0\\.1:\\d+");
            assertThat(written).isEqualTo("kubeconfig=" + kubeconfig);
            try (KubernetesClient client = new KubernetesClientBuilder()
                    .withConfig(Config.fromKubeconfig(Files.readString(kubeconfig))).build()) {
                client.nodes().resource(new NodeBuilder().withNewMetadata().withName("n1").endMetadata().build()).create();
                assertThat(client.nodes().list().getItems()).hasSize(1);
            }

            p.getOutputStream().close();
            assertThat(p.waitFor(60, TimeUnit.SECONDS)).as("exits once stdin is closed").isTrue();
            assertThat(p.exitValue()).isZero();
        } finally {
            p.destroyForcibly();
        }
    }
}
