package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.jflannel.e2e.RenderDiff.Difference;
import org.junit.jupiter.api.Test;

/**
 * The chart with its defaults renders manifests/base (the files as written; ManifestRenderIT compares
 * every overlay through kubectl kustomize) but for what upstream's chart decides differently and we
 * follow: no Namespace object (the release's namespace), upstream's chart's tolerations (NoExecute
 * too), and net-conf.json without {@code "EnableNFTables": false} (the chart writes it only when true).
 */
class ChartMatchesManifestsTest {
    static final List<String> CHART_NOT_KUSTOMIZE = List.of(
            "Namespace/kube-flannel",
            "DaemonSet/kube-flannel/kube-flannel-ds: spec.template.spec.tolerations",
            "ConfigMap/kube-flannel/kube-flannel-cfg: data.net-conf.json.EnableNFTables");

    @Test
    void theDefaultsRenderTheBasesObjects() throws Exception {
        Path base = HelmRender.ROOT.resolve("manifests/base");
        StringBuilder kustomize = new StringBuilder();
        for (String f : List.of("namespace.yml", "rbac.yml", "configmap.yml", "daemonset.yml")) {
            kustomize.append(Files.readString(base.resolve(f), StandardCharsets.UTF_8)).append("\n---\n");
        }

        List<Difference> diffs = RenderDiff.between(HelmRender.template(HelmRender.CHART, HelmRender.values("defaults")),
                kustomize.toString());

        assertThat(diffs).extracting(Difference::where).containsExactlyInAnyOrderElementsOf(CHART_NOT_KUSTOMIZE);
    }
}
