package org.jflannel.testsupport.kube;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import org.jflannel.testsupport.cluster.Wait;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A Go client against the mock API server: {@code kubectl get nodes --watch} lists, then watches from
 * the list's resourceVersion over a plain chunked stream and prints each change. Needs kubectl (bin/setup installs Debian's kubernetes-client);
 * {@code -Djflannel.kubectl=<path>} picks another one.
 */
@Tag("e2e")
class KubectlWatchIT {

    private static String kubectl() {
        return System.getProperty("jflannel.kubectl", "kubectl");
    }

    private static void node(KubernetesClient c, String name) {
        c.nodes().resource(new NodeBuilder().withNewMetadata().withName(name).endMetadata().build()).create();
    }

    @Test
    void kubectlListsThenWatchesAndSeesEveryChange(@TempDir Path dir) throws Exception {
        try (KubeMockServer server = KubeMockServer.start(); KubernetesClient client = server.newClient()) {
            node(client, "n1");
            Path kubeconfig = server.writeKubeconfig(dir.resolve("kubeconfig"));
            Process p = new ProcessBuilder(kubectl(), "--kubeconfig=" + kubeconfig, "--server=" + server.url(),
                    "get", "nodes", "--watch", "-o", "custom-columns=NAME:.metadata.name,RV:.metadata.resourceVersion",
                    "--no-headers").redirectError(dir.resolve("kubectl.err").toFile()).start();
            BlockingQueue<String> lines = new LinkedBlockingQueue<>();
            Thread reader = new Thread(() -> {
                try (BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8))) {
                    r.lines().forEach(lines::add);
                } catch (Exception ignored) {
                    // kubectl was stopped
                }
            }, "kubectl-out");
            reader.setDaemon(true);
            reader.start();
            try {
                assertThat(next(lines, p, dir)).startsWith("n1 ");
                Wait.until("kubectl watching", Duration.ofSeconds(30), () -> {
                    if (!p.isAlive()) {
                        throw new Wait.Abort("kubectl exited: " + Files.readString(dir.resolve("kubectl.err")));
                    }
                    return server.calls().stream().anyMatch(c -> c.verb().equals("watch"));
                });

                node(client, "n2");
                assertThat(next(lines, p, dir)).startsWith("n2 ");
                client.nodes().withName("n1").edit(n -> new NodeBuilder(n).editMetadata().addToAnnotations("a", "b")
                        .endMetadata().build());
                String rv = client.nodes().withName("n1").get().getMetadata().getResourceVersion();
                assertThat(next(lines, p, dir)).isEqualTo("n1 " + rv);
            } finally {
                p.destroy(); // our own child, by its handle
                p.waitFor(10, TimeUnit.SECONDS);
            }
            List<ApiCall> watches = server.calls().stream().filter(c -> c.verb().equals("watch")).toList();
            assertThat(watches).isNotEmpty();
            assertThat(watches.get(0).path()).contains("resourceVersion=").contains("watch=true");
            assertThat(watches.get(0).userAgent()).startsWith("kubectl");
            assertThat(server.watchTransports().websocket()).isZero();
            System.out.println("kubectl " + watches.get(0).userAgent() + " watched " + watches.get(0).path());
        }
    }

    private static String next(BlockingQueue<String> lines, Process p, Path dir) throws Exception {
        String line = lines.poll(30, TimeUnit.SECONDS);
        if (line == null) {
            throw new AssertionError("kubectl printed nothing within 30 s (alive=" + p.isAlive() + "): "
                    + Files.readString(dir.resolve("kubectl.err")));
        }
        return line.strip().replaceAll("\\s+", " ");
    }
}
