package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.PodSpec;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.jflannel.testsupport.cluster.ClusterOptions;
import org.jflannel.testsupport.manifests.RenderedManifests;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@code kubectl kustomize} (the operator's {@code kubectl apply -k}) renders {@code manifests/} and
 * every directory under {@code manifests/overlays}; each rendered object parses with fabric8's model
 * types and the cross-references hold ({@link ManifestChecks}); the kustomization's one
 * {@code images:} entry sets every container's image. Needs kubectl (bin/setup installs Debian's
 * kubernetes-client when none is present).
 */
@Tag("e2e")
class ManifestRenderIT {
    static final Path MANIFESTS = ClusterOptions.findProjectRoot().resolve("manifests");
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

    /** manifests/ itself, then every overlay. */
    static Stream<Path> kustomizations() throws Exception {
        List<Path> all = new ArrayList<>(List.of(MANIFESTS));
        all.addAll(RenderedManifests.overlays(MANIFESTS));
        return all.stream();
    }

    @Test
    void theUdpEtcdAndWireguardOverlaysExist() throws Exception {
        assertThat(RenderedManifests.overlays(MANIFESTS)).extracting(p -> p.getFileName().toString())
                .contains("udp", "etcd", "wireguard");
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("kustomizations")
    void rendersParsesAndEveryCrossReferenceHolds(Path dir) throws Exception {
        RenderedManifests m = RenderedManifests.render(dir);

        assertThat(m.names()).contains("Namespace/kube-flannel", "ServiceAccount/flannel", "ClusterRole/flannel",
                "ClusterRoleBinding/flannel", "ConfigMap/kube-flannel-cfg", "DaemonSet/kube-flannel-ds");
        assertThat(ManifestChecks.all(m)).as("cross-reference problems in %s", dir).isEmpty();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("kustomizations")
    void everyContainerRunsTheImageOfTheImagesEntry(Path dir) throws Exception {
        JsonNode entry = imagesEntry();
        String expected = entry.path("newName").asText() + ":" + entry.path("newTag").asText();

        PodSpec pod = ManifestChecks.pod(RenderedManifests.render(dir));

        assertThat(ManifestChecks.containers(pod).map(Container::getImage)).as("images in %s", dir)
                .isNotEmpty().allMatch(expected::equals);
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("kustomizations")
    void changingTheOneImagesLineRewritesEveryContainer(Path dir, @TempDir Path tmp) throws Exception {
        // what an operator does: a kustomization on top that names another registry and tag (or the same
        // edit in base/kustomization.yaml); nothing in the pod spec may keep the old image. (kustomize takes
        // bases by relative path only.)
        String name = imagesEntry().path("name").asText();
        Files.writeString(tmp.resolve("kustomization.yaml"), "bases:\n  - " + tmp.toAbsolutePath().relativize(dir.toAbsolutePath()) + "\nimages:\n"
                + "  - name: " + name + "\n    newName: registry.test/mirror/jflannel\n    newTag: \"t1\"\n",
                StandardCharsets.UTF_8);

        PodSpec pod = ManifestChecks.pod(RenderedManifests.render(tmp));

        assertThat(ManifestChecks.containers(pod).map(Container::getImage)).as("images in %s re-tagged", dir)
                .isNotEmpty().allMatch("registry.test/mirror/jflannel:t1"::equals);
    }

    @Test
    void theKubeFlannelPodSpecRunsTheContractsCommands() throws Exception {
        PodSpec pod = ManifestChecks.pod(RenderedManifests.render(MANIFESTS));

        assertThat(pod.getInitContainers()).extracting(Container::getName, Container::getCommand).containsExactly(
                org.assertj.core.groups.Tuple.tuple("install-cni-plugin",
                        List.of("/opt/jflannel/bin/flanneld", "install-cni-plugin", "/opt/cni/bin")),
                org.assertj.core.groups.Tuple.tuple("install-cni", List.of("/opt/jflannel/bin/flanneld", "install-cni-conf",
                        "/etc/kube-flannel/cni-conf.json", "/etc/cni/net.d/10-flannel.conflist")),
                org.assertj.core.groups.Tuple.tuple("cds-archive", List.of("/opt/jflannel/bin/flanneld", "cds-archive")));
        Container main = ManifestChecks.flannel(pod);
        assertThat(main.getCommand()).containsExactly("/opt/jflannel/bin/flanneld");
        assertThat(main.getArgs()).containsExactly("--ip-masq", "--kube-subnet-mgr", "--healthz-port=8081");
        assertThat(main.getResources().getRequests()).containsKeys("cpu", "memory");
    }

    @Test
    void theClassDataArchiveIsMadeForTheDaemonsSubnetManager() throws Exception {
        // the cds-archive init container dumps the archive of one subnet manager: the one the daemon runs
        for (Path dir : kustomizations().toList()) {
            PodSpec pod = ManifestChecks.pod(RenderedManifests.render(dir));
            Container main = ManifestChecks.flannel(pod);
            Container cds = pod.getInitContainers().stream().filter(c -> c.getName().equals("cds-archive")).findFirst().orElseThrow();
            List<String> mode = cds.getEnv().stream().filter(e -> e.getName().equals("FLANNELD_KUBE_SUBNET_MGR"))
                    .map(io.fabric8.kubernetes.api.model.EnvVar::getValue).toList();
            assertThat(mode).as("cds-archive's FLANNELD_KUBE_SUBNET_MGR in %s", dir)
                    .containsExactly(String.valueOf(main.getArgs().contains("--kube-subnet-mgr")));
            // the daemon reads the archive where the init container wrote it
            String initMount = cds.getVolumeMounts().stream().filter(m -> m.getName().equals("cds")).findFirst().orElseThrow().getMountPath();
            assertThat(main.getVolumeMounts()).as("%s", dir)
                    .anyMatch(m -> m.getName().equals("cds") && m.getMountPath().equals(initMount) && Boolean.TRUE.equals(m.getReadOnly()));
        }
    }

    @Test
    void noOverlaySetsFlanneldJitTheDaemonFollowsItsBackend() throws Exception {
        // issue 40: the daemon runs C2 by itself for udp and userspace wireguard (docs/configuration.md, "The JIT");
        // FLANNELD_JIT is only the user's override
        for (Path dir : kustomizations().toList()) {
            Container main = ManifestChecks.flannel(ManifestChecks.pod(RenderedManifests.render(dir)));
            List<String> jit = main.getEnv().stream().filter(e -> e.getName().equals("FLANNELD_JIT"))
                    .map(io.fabric8.kubernetes.api.model.EnvVar::getValue).toList();
            assertThat(jit).as("FLANNELD_JIT in %s", dir)
                    .isEmpty();
        }
    }

    @ParameterizedTest(name = "{0} = chart with {1}.yaml")
    @CsvSource({"manifests,defaults", "udp,udp", "host-gw,host-gw", "etcd,etcd", "wireguard,wireguard"})
    void theChartRendersWhatTheKustomizationDoes(String kustomization, String values) throws Exception {
        // one DaemonSet in two forms: the chart's values reach what each overlay patches in
        Path dir = kustomization.equals("manifests") ? MANIFESTS : MANIFESTS.resolve("overlays").resolve(kustomization);

        var diffs = RenderDiff.between(HelmRender.template(HelmRender.CHART, HelmRender.values(values)),
                RenderedManifests.render(dir).yaml());

        List<String> expected = new ArrayList<>(ChartMatchesManifestsTest.CHART_NOT_KUSTOMIZE);
        if (kustomization.equals("etcd")) {
            // kustomize's strategic merge of the overlay's cds-archive patch moves that init container first;
            // the chart keeps the base's order (the three are independent of each other)
            expected.add("DaemonSet/kube-flannel/kube-flannel-ds: spec.template.spec.initContainers (order)");
        }
        assertThat(diffs).extracting(RenderDiff.Difference::where).as("chart with %s.yaml vs %s", values, dir)
                .containsExactlyInAnyOrderElementsOf(expected);
    }

    @Test
    void theChartWithFlanneldsOwnNetworkPolicyRendersTheNetworkPolicyOverlay() throws Exception {
        // netpol.enabled with engine flanneld: the overlay's variable and RBAC, no kube-network-policies container
        var diffs = RenderDiff.between(HelmRender.templateWith("{netpol: {enabled: true}, jflannel: {networkPolicy: {engine: flanneld}}}"),
                RenderedManifests.render(MANIFESTS.resolve("overlays/network-policy")).yaml());
        assertThat(diffs).extracting(RenderDiff.Difference::where).as("chart with flanneld's engine vs overlays/network-policy")
                .containsExactlyInAnyOrderElementsOf(ChartMatchesManifestsTest.CHART_NOT_KUSTOMIZE);
    }

    /** The {@code images:} entry of manifests/base/kustomization.yaml (there must be exactly one). */
    private static JsonNode imagesEntry() throws Exception {
        JsonNode k = YAML.readTree(MANIFESTS.resolve("base/kustomization.yaml").toFile());
        assertThat(k.path("images")).as("images: in base/kustomization.yaml").hasSize(1);
        return k.path("images").get(0);
    }
}
