package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.jflannel.testsupport.cluster.ClusterOptions;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every kustomization under manifests/ stays within what kustomize v2.0.3 reads (kubectl 1.14-1.20,
 * Debian 12's kubernetes-client): directories go under {@code bases:} (v2.0.3's {@code resources:}
 * takes files only: "must be a file"), patches under {@code patchesStrategicMerge} /
 * {@code patchesJson6902} ({@code patches:} is v3+). ManifestRenderIT renders with whichever kubectl
 * the machine has; this keeps the oldest one working without needing it installed.
 */
class KustomizationCompatTest {
    private static final Set<String> V2_0_3_FIELDS = Set.of("apiVersion", "kind", "resources", "bases",
            "patchesStrategicMerge", "patchesJson6902", "images", "namespace", "namePrefix", "nameSuffix",
            "commonLabels", "commonAnnotations", "configMapGenerator", "secretGenerator", "generatorOptions", "vars",
            "crds");
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

    static Stream<Path> kustomizationFiles() throws Exception {
        Path manifests = ClusterOptions.findProjectRoot().resolve("manifests");
        try (Stream<Path> s = Files.walk(manifests)) {
            return s.filter(p -> p.getFileName().toString().equals("kustomization.yaml")).sorted().toList().stream();
        }
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("kustomizationFiles")
    void usesOnlyKustomize203Fields(Path file) throws Exception {
        JsonNode k = YAML.readTree(file.toFile());
        List<String> fields = new ArrayList<>();
        k.fieldNames().forEachRemaining(fields::add);

        assertThat(fields).as("fields of %s", file).allMatch(V2_0_3_FIELDS::contains);
        for (JsonNode r : k.path("resources")) {
            assertThat(file.resolveSibling(r.asText())).as("resources entry %s of %s (directories go under bases:)", r, file)
                    .isRegularFile();
        }
        for (JsonNode b : k.path("bases")) {
            Path base = file.getParent().resolve(b.asText()).normalize();
            assertThat(base).as("bases entry %s of %s", b, file).isDirectory();
            assertThat(file.getParent().normalize().startsWith(base)).as("%s is inside its base %s (kustomize: cycle detected)",
                    file, base).isFalse();
        }
    }
}
