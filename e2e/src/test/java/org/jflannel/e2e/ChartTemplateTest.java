package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import com.marcnuri.helm.Helm;
import com.marcnuri.helm.LintResult;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.EnvVar;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.Volume;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.jflannel.testsupport.manifests.RenderedManifests;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Our chart on its own, rendered by Helm ({@link HelmRender}): lint, the version, the schema and the
 * template's own checks failing with the key's name, the keys that only we have, the plugin image's
 * mapping, valid JSON for every tunnelMode, and {@code helm package}.
 */
class ChartTemplateTest {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

    @Test
    void helmLintStrictFindsNothingWrong() {
        LintResult lint = HelmRender.lint(HelmRender.CHART);

        assertThat(lint.isFailed()).as("helm lint --strict: %s", lint.getMessages()).isFalse();
        assertThat(lint.getMessages()).as("lint messages").noneMatch(m -> m.contains("[WARNING]") || m.contains("[ERROR]"));
    }

    @Test
    void theChartsVersionIsTheProjectsAndTheImageTagOfTheKustomization() throws Exception {
        JsonNode chart = YAML.readTree(HelmRender.CHART.resolve("Chart.yaml").toFile());
        JsonNode kustomization = YAML.readTree(HelmRender.ROOT.resolve("manifests/base/kustomization.yaml").toFile());
        String pom = Files.readString(HelmRender.ROOT.resolve("pom.xml"));
        String projectVersion = pom.replaceFirst("(?s).*?<artifactId>jflannel-parent</artifactId>\\s*<version>([^<]+)</version>.*", "$1")
                .replace("-SNAPSHOT", "");

        assertThat(chart.path("version").asText()).isEqualTo(projectVersion);
        assertThat(chart.path("appVersion").asText()).isEqualTo(projectVersion);
        assertThat(kustomization.path("images").get(0).path("newTag").asText()).isEqualTo(projectVersion);
        Container main = ManifestChecks.flannel(pod(HelmRender.renderWith("")));
        assertThat(main.getImage()).isEqualTo(kustomization.path("images").get(0).path("newName").asText() + ":" + projectVersion);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "flannel: {backend: ipip}                   | flannel.backend",
            "flannel: {backend: VXLAN}                  | flannel.backend",
            "flannel: {mtu: big}                        | flannel.mtu",
            "flannel: {backendPort: 70000}              | flannel.backendPort",
            "flannel: {vni: '1'}                        | flannel.vni",
            "flannel: {GBP: 'yes'}                      | flannel.GBP",
            "flannel: {tunnelMode: sideways}            | flannel.tunnelMode",
            "flannel: {args: --ip-masq}                 | flannel.args",
            "flannel: {healthz: {port: '8081'}}         | flannel.healthz.port",
            "flannel: {enableNFTables: 1}               | flannel.enableNFTables",
            "podCidr: 10                                | podCidr",
            "netpol: {enabled: 'true'}                  | netpol.enabled",
            "global: {imagePullSecrets: [regcred]}      | global.imagePullSecrets.0",
            "jflannel: {udp: {kernel: fast}}            | jflannel.udp.kernel",
            "jflannel: {wireguard: {dataplane: go}}     | jflannel.wireguard.dataplane",
            "jflannel: {peerProbe: {interval: 0}}       | jflannel.peerProbe.interval",
            "jflannel: {etcd: {enabled: yes please}}    | jflannel.etcd.enabled",
            "jflannel: {udpKernel: gpe}                 | udpKernel",
    })
    void aWrongTypeOrAnUnknownValueFailsTheRenderNamingTheKey(String values, String key) {
        assertThatThrownBy(() -> HelmRender.templateWith(values)).as("values %s", values)
                .hasMessageContaining(key);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
            "flannel: {image: {repository: ghcr.io/flannel-io/flannel, tag: v0.28.9}}  | flannel.image.repository: ghcr.io/flannel-io/flannel is upstream flannel's image",
            "flannel: {image: {repository: docker.io/flannel/flannel, tag: v0.22.0}}   | flannel.image.repository: docker.io/flannel/flannel is upstream flannel's image",
            "flannel: {flannel_cni: {image: {repository: example.com/cni, tag: ''}}}     | flannel.flannel_cni.image.tag: empty",
            "jflannel: {etcd: {enabled: true}}                                         | jflannel.etcd.enabled: true runs flanneld in etcd mode, but flannel.args has --kube-subnet-mgr",
            "{podCidr: '', podCidrv6: ''}                                              | podCidr, podCidrv6: both empty",
            "{netpol: {enabled: true}, flannel: {args: ['--ip-masq']}, jflannel: {etcd: {enabled: true}, networkPolicy: {engine: flanneld}}} | jflannel.networkPolicy.engine: flanneld needs the Kubernetes API",
    })
    void aValueTheChartCannotRunFailsTheRenderNamingTheKey(String values, String message) {
        assertThatThrownBy(() -> HelmRender.templateWith(values)).as("values %s", values).hasMessageContaining(message);
    }

    @ParameterizedTest(name = "tunnelMode {0}")
    @ValueSource(strings = {"separate", "auto", "ipv4", "ipv6"})
    void everyTunnelModeIsWrittenAsAJsonString(String mode) throws Exception {
        // Ours: upstream's chart writes "Mode": separate (not JSON)
        RenderedManifests m = HelmRender.renderWith("flannel: {backend: wireguard, tunnelMode: " + mode
                + ", psk: 0, backendPortv6: 51821}\npodCidrv6: 2001:db8::/56\n");

        JsonNode backend = JSON.readTree(m.configMap("kube-flannel-cfg").getData().get("net-conf.json")).path("Backend");

        assertThat(backend.path("Mode").isTextual()).as("Mode in %s", backend).isTrue();
        assertThat(backend.path("Mode").asText()).isEqualTo(mode);
        assertThat(backend.has("PSK")).as("psk: 0 (upstream's commented default) means none, as upstream's chart has it").isFalse();
        assertThat(backend.path("ListenPortV6").asInt()).isEqualTo(51821);
    }

    @Test
    void byDefaultThePluginComesFromJflannelsImageThroughInstallCniPlugin() throws Exception {
        Container plugin = init(pod(HelmRender.renderWith("flannel: {image: {repository: registry.test/jflannel, tag: t2}}")),
                "install-cni-plugin");

        assertThat(plugin.getImage()).isEqualTo("registry.test/jflannel:t2");
        assertThat(plugin.getCommand()).containsExactly("/opt/jflannel/bin/flanneld", "install-cni-plugin", "/opt/cni/bin");
    }

    @Test
    void anotherPluginImageIsInstalledWithUpstreamsCopy() throws Exception {
        // upstream's values name ghcr.io/flannel-io/flannel-cni-plugin: its Go plugin beside jflannel's daemon
        Container plugin = init(pod(HelmRender.renderWith("flannel: {flannel_cni: {image: "
                + "{repository: ghcr.io/flannel-io/flannel-cni-plugin, tag: v1.9.1-flannel3}}}")), "install-cni-plugin");

        assertThat(plugin.getImage()).isEqualTo("ghcr.io/flannel-io/flannel-cni-plugin:v1.9.1-flannel3");
        assertThat(plugin.getCommand()).containsExactly("cp");
        assertThat(plugin.getArgs()).containsExactly("-f", "/flannel", "/opt/cni/bin/flannel");
    }

    @Test
    void theImageKeyRetagsEveryJflannelContainer() throws Exception {
        PodSpec pod = pod(HelmRender.renderWith("flannel: {image: {repository: registry.test/mirror/jflannel, tag: t1}}\n"
                + "netpol: {enabled: true}\n"));

        assertThat(ManifestChecks.containers(pod).filter(c -> !c.getName().equals("kube-network-policies")).map(Container::getImage))
                .hasSize(4).allMatch("registry.test/mirror/jflannel:t1"::equals);
    }

    @Test
    void healthzPortZeroLeavesOutTheFlagThePortAndTheProbes() throws Exception {
        Container main = ManifestChecks.flannel(pod(HelmRender.renderWith("flannel: {healthz: {port: 0}}")));

        assertThat(main.getArgs()).containsExactly("--ip-masq", "--kube-subnet-mgr");
        assertThat(main.getPorts()).isEmpty();
        assertThat(main.getLivenessProbe()).isNull();
        assertThat(main.getReadinessProbe()).isNull();
    }

    @Test
    void peerProbeKeysBecomeFlanneldsFlagsOnlyWhenTheyDifferFromItsDefaults() throws Exception {
        Container defaults = ManifestChecks.flannel(pod(HelmRender.renderWith("")));
        Container set = ManifestChecks.flannel(pod(HelmRender.renderWith("jflannel: {peerProbe: {enabled: false, interval: 30}}")));

        assertThat(defaults.getArgs()).containsExactly("--ip-masq", "--kube-subnet-mgr", "--healthz-port=8081");
        assertThat(set.getArgs()).containsExactly("--ip-masq", "--kube-subnet-mgr", "--peer-probe=false", "--peer-probe-interval=30",
                "--healthz-port=8081");
    }

    @Test
    void theUdpKernelDatapathOffDropsBpfAndTellsTheDaemon() throws Exception {
        Container on = ManifestChecks.flannel(pod(HelmRender.renderWith("flannel: {backend: udp}\njflannel: {udp: {gpePort: 4791}}")));
        Container off = ManifestChecks.flannel(pod(HelmRender.renderWith("flannel: {backend: udp}\njflannel: {udp: {kernel: 'off'}}")));

        assertThat(on.getSecurityContext().getCapabilities().getAdd()).containsExactly("NET_ADMIN", "NET_RAW", "BPF");
        assertThat(env(on, "JFLANNEL_UDP_GPE_PORT")).containsExactly("4791");
        assertThat(env(on, "JFLANNEL_UDP_KERNEL")).isEmpty();
        assertThat(off.getSecurityContext().getCapabilities().getAdd()).containsExactly("NET_ADMIN", "NET_RAW");
        assertThat(env(off, "JFLANNEL_UDP_KERNEL")).containsExactly("off");
    }

    @Test
    void theWireguardKernelDataplaneNeedsNoTunAndTheOthersDo() throws Exception {
        PodSpec kernel = pod(HelmRender.renderWith("flannel: {backend: wireguard}\njflannel: {wireguard: {dataplane: kernel, cryptoThreads: 0}}"));
        PodSpec auto = pod(HelmRender.renderWith("flannel: {backend: wireguard}"));

        assertThat(kernel.getVolumes()).extracting(Volume::getName).doesNotContain("dev-net-tun");
        assertThat(env(ManifestChecks.flannel(kernel), "JFLANNEL_WG_DATAPLANE")).containsExactly("kernel");
        assertThat(env(ManifestChecks.flannel(kernel), "JFLANNEL_WG_CRYPTO_THREADS")).containsExactly("0");
        assertThat(auto.getVolumes()).extracting(Volume::getName).contains("dev-net-tun");
        assertThat(env(ManifestChecks.flannel(auto), "JFLANNEL_WG_DATAPLANE")).isEmpty();
        assertThat(env(ManifestChecks.flannel(auto), "FLANNELD_JIT")).as("the daemon's JIT follows net-conf.json by itself").isEmpty();
    }

    @Test
    void theClassDataArchiveIsMadeForTheSubnetManagerTheArgsChoose() throws Exception {
        Container kube = init(pod(HelmRender.renderWith("")), "cds-archive");
        Container etcd = init(pod(HelmRender.renderWith("flannel: {args: ['--ip-masq', '--etcd-endpoints=http://10.0.0.1:2379']}")),
                "cds-archive");

        assertThat(env(kube, "FLANNELD_KUBE_SUBNET_MGR")).containsExactly("true");
        assertThat(env(etcd, "FLANNELD_KUBE_SUBNET_MGR")).containsExactly("false");
    }

    @Test
    void helmPackageMakesTheTgzThatRendersAsTheDirectoryDoes(@TempDir Path dest) throws Exception {
        Helm packaged = new Helm(HelmRender.CHART).packageIt().withDestination(dest).call();
        Path tgz = dest.resolve("jflannel-0.1.0.tgz");

        assertThat(tgz).isRegularFile();
        String fromTgz = new Helm(tgz).template().withName(HelmRender.RELEASE).withNamespace(HelmRender.NAMESPACE)
                .withValuesFile(HelmRender.values("every-key-wireguard")).call();
        assertThat(fromTgz).isEqualTo(HelmRender.template(HelmRender.CHART, HelmRender.values("every-key-wireguard")));
        assertThat(packaged).isNotNull();
    }

    private static PodSpec pod(RenderedManifests m) {
        return ManifestChecks.pod(m);
    }

    private static Container init(PodSpec pod, String name) {
        return pod.getInitContainers().stream().filter(c -> c.getName().equals(name)).findFirst()
                .orElseThrow(() -> new AssertionError("no init container " + name));
    }

    private static List<String> env(Container c, String name) {
        return c.getEnv().stream().filter(e -> e.getName().equals(name)).map(EnvVar::getValue).toList();
    }
}
