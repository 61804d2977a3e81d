package org.jflannel.e2e;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.LintResult;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.jflannel.testsupport.cluster.ClusterOptions;
import org.jflannel.testsupport.cluster.UpstreamFlannel;
import org.jflannel.testsupport.manifests.RenderedManifests;

/**
 * Charts rendered by Helm's own engine: helm-java runs Helm v3.16.4 as a native library inside this
 * JVM (no helm binary, no cluster), so {@code template} here is {@code helm template}, the schema
 * check and the Go templates included. The library is copied to java.io.tmpdir once per JVM (~94 MB),
 * so all chart tests share one JVM (surefire's default fork). Release {@code flannel} in namespace
 * {@code kube-flannel}, as upstream's install instructions name them.
 */
final class HelmRender {
    static final Path ROOT = ClusterOptions.findProjectRoot();
    /** Ours. */
    static final Path CHART = ROOT.resolve("chart/jflannel");
    /** Upstream flannel's chart v0.28.9, unchanged (../shared/upstream/chart-v0.28.9). */
    static final Path UPSTREAM_CHART = UpstreamFlannel.dataDir(ROOT).resolve("chart-v0.28.9");
    static final String RELEASE = "flannel";
    static final String NAMESPACE = ManifestChecks.NAMESPACE;

    private HelmRender() {
    }

    /** {@code helm template flannel CHART -n kube-flannel -f VALUES}: the YAML, or Helm's error as an exception. */
    static String template(Path chart, Path values) {
        return new Helm(chart).template().withName(RELEASE).withNamespace(NAMESPACE).withValuesFile(values).call();
    }

    /** Our chart with the values given as YAML text (written to a temporary file, as {@code -f} takes them). */
    static String templateWith(String valuesYaml) throws IOException {
        Path f = Files.createTempFile("chart-values", ".yaml");
        try {
            Files.writeString(f, valuesYaml);
            return template(CHART, f);
        } finally {
            Files.delete(f);
        }
    }

    /** {@link #templateWith} parsed with fabric8's model types. */
    static RenderedManifests renderWith(String valuesYaml) throws IOException {
        return RenderedManifests.parse(Path.of("jflannel", "inline values"), templateWith(valuesYaml));
    }

    /** The same, parsed with fabric8's model types; the source reads {@code <chart dir>/<values file>}. */
    static RenderedManifests render(Path chart, Path values) throws IOException {
        return RenderedManifests.parse(Path.of(chart.getFileName().toString(), values.getFileName().toString()),
                template(chart, values));
    }

    /** {@code helm lint --strict CHART} with the chart's own values. */
    static LintResult lint(Path chart) {
        return new Helm(chart).lint().strict().call();
    }

    /** A values file of the test resources ({@code chart-values/NAME.yaml}). */
    static Path values(String name) {
        try {
            var url = HelmRender.class.getResource("/chart-values/" + name + ".yaml");
            if (url == null) {
                throw new IllegalArgumentException("no test resource chart-values/" + name + ".yaml");
            }
            return Path.of(url.toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Every values file of the test resources, by name (without .yaml), sorted. */
    static List<String> allValues() {
        try (Stream<Path> s = Files.list(values("defaults").getParent())) {
            return s.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".yaml"))
                    .map(n -> n.substring(0, n.length() - ".yaml".length())).sorted().toList();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
