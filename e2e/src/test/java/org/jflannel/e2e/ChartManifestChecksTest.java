package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Set;
import java.util.stream.Stream;
import org.jflannel.testsupport.manifests.RenderedManifests;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The checks that read kustomize's output (ManifestChecks: every mount names a volume, every file a
 * container reads from a ConfigMap is there, the ServiceAccount and RBAC wiring, probes on flanneld's
 * port, the configs parse with flanneld's own parser) read Helm's: our chart with every values file.
 * The namespace is the release's ({@code helm install -n kube-flannel}), made outside the chart.
 */
class ChartManifestChecksTest {
    static Stream<String> valuesFiles() {
        return HelmRender.allValues().stream();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("valuesFiles")
    void everyCrossReferenceHolds(String values) throws Exception {
        RenderedManifests m = HelmRender.render(HelmRender.CHART, HelmRender.values(values));

        assertThat(m.names()).contains("ServiceAccount/flannel", "ClusterRole/flannel", "ClusterRoleBinding/flannel",
                "ConfigMap/kube-flannel-cfg", "DaemonSet/kube-flannel-ds").doesNotContain("Namespace/kube-flannel");
        assertThat(ManifestChecks.all(m, Set.of(HelmRender.NAMESPACE))).as("cross-reference problems with %s.yaml", values).isEmpty();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("valuesFiles")
    void withoutTheReleasesNamespaceTheChecksWouldSayWhatIsMissing(String values) throws Exception {
        // the check above can fail: the same objects, read as a kustomization (which must carry its Namespace)
        RenderedManifests m = HelmRender.render(HelmRender.CHART, HelmRender.values(values));

        assertThat(ManifestChecks.all(m)).anyMatch(p -> p.contains("is in namespace kube-flannel, which is not rendered"));
    }
}
