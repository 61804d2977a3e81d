package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.jflannel.testsupport.cluster.ClusterOptions;
import org.jflannel.testsupport.manifests.RenderedManifests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * ManifestChecks finds each broken cross-reference: the base's files (plain YAML, parsed without
 * kubectl) pass, and one edit at a time breaks exactly the check it should.
 */
class ManifestChecksTest {
    private static final Path BASE = ClusterOptions.findProjectRoot().resolve("manifests/base");

    private static String baseYaml() throws Exception {
        StringBuilder sb = new StringBuilder();
        for (String f : List.of("namespace.yml", "rbac.yml", "configmap.yml", "daemonset.yml")) {
            sb.append(Files.readString(BASE.resolve(f), StandardCharsets.UTF_8)).append("\n---\n");
        }
        return sb.toString();
    }

    @Test
    void theBaseAsWrittenHasNoProblem() throws Exception {
        assertThat(ManifestChecks.all(RenderedManifests.parse(BASE, baseYaml()))).isEmpty();
    }

    @ParameterizedTest(name = "{2}")
    @CsvSource(delimiter = ';', value = {
            "            - name: run\\n              mountPath: /run/flannel;            - name: runn\\n              mountPath: /run/flannel;mounts volume runn",
            "serviceAccountName: flannel;serviceAccountName: flanel;serviceAccountName flanel has no ServiceAccount",
            "  cni-conf.json: |;  cni-conf.jsn: |;key cni-conf.json of ConfigMap kube-flannel-cfg is missing",
            "  net-conf.json: |;  net-conf.jsn: |;key net-conf.json of ConfigMap kube-flannel-cfg is missing",
            "--healthz-port=8081;--healthz-port=8082;flanneld listens on --healthz-port=8082",
            "hostNetwork: true;hostNetwork: false;hostNetwork is not true",
            "\"cniVersion\": \"1.0.0\";\"cniVersion\": \"0.3.1\";is below 1.0.0",
    })
    void oneBrokenReferenceIsReported(String from, String to, String problem) throws Exception {
        String yaml = baseYaml();
        String f = from.replace("\\n", "\n");
        assertThat(yaml).as("the base contains the text this case edits").contains(f);

        List<String> problems = ManifestChecks.all(RenderedManifests.parse(BASE, yaml.replace(f, to.replace("\\n", "\n"))));

        assertThat(problems).anyMatch(p -> p.contains(problem));
    }
}
