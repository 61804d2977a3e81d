package org.jflannel.testsupport.manifests;

import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.apps.DaemonSet;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.jflannel.testsupport.cluster.Cmd;

/**
 * A kustomization rendered by {@code kubectl kustomize} (the operator's {@code kubectl apply -k} sees
 * the same objects) and parsed with fabric8's model types: every object must come back as its typed
 * model class (a {@link GenericKubernetesResource} means an unknown kind or apiVersion, a typo an
 * API server would reject too).
 */
public final class RenderedManifests {
    /** {@code kubectl}, or the binary named by system property {@code jflannel.kubectl}. */
    public static final String KUBECTL = System.getProperty("jflannel.kubectl", "kubectl");
    private static final Duration RENDER_WITHIN = Duration.ofSeconds(60);

    private final Path source;
    private final String yaml;
    private final List<HasMetadata> objects;

    private RenderedManifests(Path source, String yaml, List<HasMetadata> objects) {
        this.source = source;
        this.yaml = yaml;
        this.objects = List.copyOf(objects);
    }

    /** {@code kubectl kustomize dir}, parsed; fails naming the directory and kubectl's error. */
    public static RenderedManifests render(Path dir) throws IOException, InterruptedException {
        Cmd.Result r = Cmd.run(RENDER_WITHIN, List.of(KUBECTL, "kustomize", dir.toString()));
        if (!r.ok()) {
            throw new IOException("kubectl kustomize " + dir + " exited " + r.exitCode() + ": " + r.stderr().strip());
        }
        return parse(dir, r.stdout());
    }

    /** Parses multi-document YAML with fabric8 (its model classes, looked up by apiVersion and kind). */
    public static RenderedManifests parse(Path source, String yaml) throws IOException {
        try (KubernetesClient parser = new KubernetesClientBuilder().build()) {
            List<HasMetadata> items = parser.load(new ByteArrayInputStream(yaml.getBytes(StandardCharsets.UTF_8))).items();
            for (HasMetadata o : items) {
                if (o instanceof GenericKubernetesResource g) {
                    throw new IOException(source + ": " + g.getApiVersion() + " " + g.getKind() + " "
                            + g.getMetadata().getName() + " is not a known Kubernetes kind");
                }
            }
            return new RenderedManifests(source, yaml, items);
        } catch (RuntimeException e) {
            throw new IOException(source + ": rendered YAML does not parse: " + e.getMessage(), e);
        }
    }

    /** Every directory under {@code manifestsDir/overlays} that holds a kustomization, sorted. */
    public static List<Path> overlays(Path manifestsDir) throws IOException {
        Path dir = manifestsDir.resolve("overlays");
        if (!Files.isDirectory(dir)) {
            return List.of();
        }
        try (Stream<Path> s = Files.list(dir)) {
            return s.filter(d -> Files.exists(d.resolve("kustomization.yaml")) || Files.exists(d.resolve("kustomization.yml"))
                    || Files.exists(d.resolve("Kustomization"))).sorted().toList();
        }
    }

    public Path source() {
        return source;
    }

    public String yaml() {
        return yaml;
    }

    public List<HasMetadata> objects() {
        return objects;
    }

    public <T extends HasMetadata> List<T> all(Class<T> kind) {
        return objects.stream().filter(kind::isInstance).map(kind::cast).toList();
    }

    public <T extends HasMetadata> Optional<T> find(Class<T> kind, String name) {
        return all(kind).stream().filter(o -> name.equals(o.getMetadata().getName())).findFirst();
    }

    public <T extends HasMetadata> T one(Class<T> kind, String name) {
        return find(kind, name).orElseThrow(() -> new IllegalStateException(source + " renders no "
                + kind.getSimpleName() + " " + name + "; it has " + names()));
    }

    /** The one DaemonSet (flannel's). */
    public DaemonSet daemonSet() {
        List<DaemonSet> all = all(DaemonSet.class);
        if (all.size() != 1) {
            throw new IllegalStateException(source + " renders " + all.size() + " DaemonSets, expected 1");
        }
        return all.get(0);
    }

    public ConfigMap configMap(String name) {
        return one(ConfigMap.class, name);
    }

    public Optional<Secret> secret(String name) {
        return find(Secret.class, name);
    }

    /** {@code Kind/name} of every object, for messages. */
    public List<String> names() {
        List<String> out = new ArrayList<>();
        objects.forEach(o -> out.add(o.getKind() + "/" + o.getMetadata().getName()));
        return out;
    }
}
