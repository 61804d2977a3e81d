package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.TestOciRegistry;
import java.net.URI;
import java.nio.file.Path;
import java.util.UUID;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * docs/installing.md's OCI path, with Helm's own commands: {@code helm package}, {@code helm registry
 * login}, {@code helm push} to a registry (Helm's test registry, in this JVM, on a local port), then
 * the chart taken from {@code oci://} renders what the directory renders. Helm's registry credentials
 * go to HELM_CONFIG_HOME, which the e2e pom points into target/.
 */
class ChartFromOciRegistryTest {
    @Test
    void theChartPushedToAnOciRegistryRendersFromThereAsFromTheDirectory(@TempDir Path dest) throws Exception {
        String password = UUID.randomUUID().toString();
        try (TestOciRegistry registry = TestOciRegistry.start(password)) {
            new Helm(HelmRender.CHART).packageIt().withDestination(dest).call();
            Helm.registry().login().withHost(registry.address()).withUsername("username").withPassword(password).call();

            String pushed = Helm.push().withChart(dest.resolve("jflannel-0.1.0.tgz"))
                    .withRemote(URI.create("oci://" + registry.address() + "/charts")).call();
            String fromRegistry = Helm.template("oci://" + registry.address() + "/charts/jflannel").withVersion("0.1.0")
                    .withName(HelmRender.RELEASE).withNamespace(HelmRender.NAMESPACE)
                    .withValuesFile(HelmRender.values("every-key-vxlan")).call();

            assertThat(pushed).contains("Pushed: ", "charts/jflannel:0.1.0");
            assertThat(fromRegistry).isEqualTo(HelmRender.template(HelmRender.CHART, HelmRender.values("every-key-vxlan")));
        }
    }
}
