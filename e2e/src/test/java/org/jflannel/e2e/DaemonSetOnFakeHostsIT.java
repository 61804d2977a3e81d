package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.concurrent.Callable;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.jflannel.core.Ip4Net;
import org.jflannel.testbase.NetnsPrivilege;
import org.jflannel.testsupport.cluster.ClusterNames;
import org.jflannel.testsupport.cluster.Cmd;
import org.jflannel.testsupport.cluster.DaemonSetCluster;
import org.jflannel.testsupport.cluster.HostSideCni;
import org.jflannel.testsupport.cluster.PingMatrix;
import org.jflannel.testsupport.cluster.UnpackedImage;
import org.jflannel.testsupport.cluster.Wait;
import org.jflannel.testsupport.kube.ApiCall;
import org.jflannel.testsupport.manifests.RenderedManifests;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The DaemonSet on fake hosts, from the image: the built OCI archive unpacked into a root file
 * system; three node namespaces, each with a fake host root ({@code /opt/cni/bin} with Debian's
 * bridge/host-local/portmap/loopback, {@code /etc/cni/net.d}, {@code /run/flannel}); on each, exactly
 * what the rendered pod spec says (init containers, then kube-flannel with its env, hostNetwork),
 * against the mock API server (Nodes with podCIDRs, in-cluster TLS and service-account token) or,
 * for the etcd overlay, a real etcd. Then pods attached on every node by the <em>installed</em>
 * {@code /opt/cni/bin/flannel} with the <em>installed</em> conflist, every JDK of this machine
 * hidden, and the full pod ping matrix. Runs for {@code manifests/} and every overlay, and for our
 * Helm chart rendered by Helm with the values of the base and of the udp, etcd and wireguard overlays.
 */
@Tag("e2e")
class DaemonSetOnFakeHostsIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final int NODES = 3;
    private static final int PODS_PER_NODE = 2;
    private static Path unpackDir;
    private static UnpackedImage image;

    @BeforeAll
    static void unpackImage() throws Exception {
        NetnsPrivilege.require();
        String unpacked = System.getProperty("jflannel.image.rootfs"); // an image unpacked before, for debugging
        if (unpacked != null && !unpacked.isBlank()) {
            image = new UnpackedImage(Path.of(unpacked), List.of(UnpackedImage.DEFAULT_PATH));
            System.out.println("image: rootfs " + unpacked + " (-Djflannel.image.rootfs), not the built archive");
            return;
        }
        Path archive = UnpackedImage.archive();
        unpackDir = Files.createTempDirectory("jflannel-image");
        image = UnpackedImage.unpack(archive, unpackDir);
        System.out.println("image: " + archive + " unpacked to " + image.rootfs() + ", env " + image.env());
    }

    @AfterAll
    static void removeRootfs() throws Exception {
        if (unpackDir != null) {
            org.jflannel.testsupport.image.ImageRootfs.delete(unpackDir);
        }
    }

    /** What the fake hosts run: a kustomization ({@code kubectl kustomize}) or our chart with a values file (Helm). */
    record Rendering(String name, Callable<RenderedManifests> render) {
        @Override
        public String toString() {
            return name;
        }
    }

    /**
     * The chart's values files that run here: the chart's counterparts of the base and the udp, etcd,
     * wireguard overlays, and a mirror with its own flannel_cni image, which the chart installs with
     * upstream's {@code cp -f /flannel} (here every image name runs the built image, so that copies our
     * one-file plugin, which unpacks its runtime on its first run).
     */
    static final List<String> CHART_VALUES = List.of("defaults", "udp", "etcd", "wireguard", "image-and-pull-secrets");

    /**
     * manifests/ and every overlay (by directory name), then the chart with each of {@link #CHART_VALUES}
     * ({@code chart-udp}, ...); {@code -Djflannel.daemonset.only=udp,chart-udp} runs those named.
     */
    static Stream<Rendering> renderings() throws Exception {
        List<String> only = List.of(System.getProperty("jflannel.daemonset.only", "").split(",")).stream()
                .map(String::strip).filter(n -> !n.isEmpty()).toList();
        Stream<Rendering> kustomize = ManifestRenderIT.kustomizations()
                .map(p -> new Rendering(p.getFileName().toString(), () -> RenderedManifests.render(p)));
        Stream<Rendering> chart = CHART_VALUES.stream()
                .map(v -> new Rendering("chart-" + v, () -> HelmRender.render(HelmRender.CHART, HelmRender.values(v))));
        return Stream.concat(kustomize, chart).filter(r -> only.isEmpty() || only.contains(r.name()));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("renderings")
    void podSpecRunFromTheImageOnThreeNodesGivesAFullPingMatrix(Rendering rendering) throws Exception {
        RenderedManifests m = rendering.render().call();
        try (DaemonSetCluster cluster = DaemonSetCluster.start(m, image, Path.of(System.getProperty("java.io.tmpdir")),
                NODES, PODS_PER_NODE, l -> System.out.println("daemonset " + rendering + ": " + l))) {
            String cniConf = m.configMap("kube-flannel-cfg").getData().get("cni-conf.json");
            JsonNode netConf = JSON.readTree(m.configMap("kube-flannel-cfg").getData().get("net-conf.json"));

            assertThat(cluster.probePort()).as("probe port = --healthz-port")
                    .isEqualTo(Integer.parseInt(ManifestChecks.flag(ManifestChecks.flannel(cluster.podSpec()), "--healthz-port")
                            .orElseThrow()));
            for (DaemonSetCluster.Node n : cluster.nodes()) {
                installedPluginAndConflist(n, cniConf);
                probesAnswer(cluster, n);
                subnetEnvAndDevice(cluster, n, netConf);
                exactlyTheManifestsCapabilities(cluster, n);
            }
            // issue 40: no FLANNELD_JIT in any overlay; the daemon's JIT follows its backend, said in its start-up line
            String type = netConf.path("Backend").path("Type").asText();
            boolean c2 = type.equals("udp") || type.equals("wireguard");
            for (DaemonSetCluster.Node n : cluster.nodes()) {
                String log = n.daemon().logTail(5000);
                log.lines().filter(l -> l.contains("JIT jit=")).forEach(l -> System.out.println(rendering + " " + n.name() + ": " + l));
                if (c2 && cluster.kubeMode()) { // the launcher read net-conf.json: C2 from the start
                    assertThat(log).as("JIT on %s", n.name()).doesNotContain("JIT relaunching")
                            .containsPattern("JIT jit=c2 reason=\"Backend.Type=" + type + "[ :][^\"]*\" chosenBy=launcher");
                } else if (c2) { // etcd mode: the config is in etcd, the daemon relaunches itself with C2
                    assertThat(log).as("JIT on %s", n.name()).contains("JIT relaunching jit=c1 wanted=c2")
                            .containsPattern("JIT jit=c2 reason=\"Backend.Type=" + type + "[ :][^\"]*\" chosenBy=daemon relaunchedMs=\\d+");
                } else {
                    assertThat(log).as("JIT on %s", n.name()).contains("JIT jit=c1 reason=\"Backend.Type=" + type + ": the kernel carries")
                            .doesNotContain("JIT relaunching");
                }
            }
            if (netConf.path("Backend").path("Type").asText().equals("udp")) {
                // the overlay grants BPF: the kernel datapath's default mode attaches (tc encapsulates, a VXLAN-GPE
                // device decapsulates)
                for (DaemonSetCluster.Node n : cluster.nodes()) {
                    assertThat(n.daemon().logTail(400)).as("udp network on %s", n.name())
                            .contains("udp network registered").contains("kernel=gpe")
                            .contains("udp kernel decapsulation through a vxlan-gpe device")
                            .containsPattern("udp kernel datapath attached .*mode=GPE");
                }
            }

            PingMatrix matrix = cluster.pingMatrix();
            System.out.println("daemonset " + rendering + ": ping matrix\n" + matrix.render());
            assertThat(cluster.pods()).hasSize(NODES * PODS_PER_NODE);
            assertThat(matrix.failures()).as("pod pairs without an answer\n%s", matrix.render()).isEmpty();
            if (netConf.path("Backend").path("Type").asText().equals("wireguard")) {
                for (DaemonSetCluster.Node n : cluster.nodes()) { // the userspace WireGuard with its batching, sessions up to its peers once pods talked
                    assertThat(n.daemon().logTail(400)).as("wireguard network on %s", n.name())
                            .contains("wireguard network registered").contains("dataplane=userspace").contains("offload=true")
                            // the image's runtime and the jar's opens give a fast engine, chosen per CPU (AeadPaths): the JDK's
                            // intrinsics with IFMA, ChaCha20's intrinsic with our Poly1305 on AVX2 only; never the JDK's Cipher
                            .containsPattern("wireguard aead path=jdk-(intrinsics|chacha20-poly64)")
                            .contains("wireguard session up");
                }
            }

            boolean policy = ManifestChecks.flannel(cluster.podSpec()).getEnv().stream()
                    .anyMatch(e -> e.getName().equals("FLANNELD_NETWORK_POLICY") && "true".equals(e.getValue()));
            if (policy) { // the image's daemon lists Pods, Namespaces and NetworkPolicies (its trimmed model) and loads its table
                for (DaemonSetCluster.Node n : cluster.nodes()) {
                    Wait.until(n.name() + " loads its network policy table", Duration.ofSeconds(60), () -> {
                        String log = n.daemon().logTail(400);
                        return log.contains("network policy state listed") && log.contains("network policy applied");
                    });
                }
            }
            if (cluster.kubeMode()) {
                callsAreExactlyTheClusterRole(cluster, m);
            }
        }
    }

    /** A PSK of upstream's minimum length (96), new for each run, as an operator would generate one. */
    private static String newPsk() {
        byte[] b = new byte[72];
        new java.security.SecureRandom().nextBytes(b);
        return java.util.Base64.getUrlEncoder().withoutPadding().encodeToString(b); // 96 characters
    }

    /**
     * The ipsec backend from the image (issue 39): an operator's kustomization on top of {@code manifests/}
     * (net-conf.json with {@code Backend.Type: ipsec} and a PSK, and NET_BIND_SERVICE for charon's IKE ports
     * 500 and 4500: a container runtime adds it by default, this harness gives exactly the listed
     * capabilities), three fake hosts in kube mode. On every node the daemon starts the image's charon
     * (its {@code /usr/lib/ipsec/charon}, in the container's root: {@code /proc/PID/root}), whose
     * {@code strongswan.conf} loads exactly the plugins the image carries; the Node says backend-type ipsec;
     * each peer's three XFRM policies are in place (the kernel's policies need no ESP module) and its IKE
     * connection loaded into charon over VICI (the daemon logs charon's acceptance).
     * The pods' ping matrix needs ESP in the kernel: asserted where the kernel has it (not on this
     * machine's, where the CHILD SAs cannot be installed), said so otherwise. SIGTERM to a node's daemon
     * ends its charon.
     */
    @Test
    void ipsecFromTheImage(@TempDir Path operator) throws Exception {
        String psk = newPsk();
        Path manifests = ManifestRenderIT.MANIFESTS;
        Files.writeString(operator.resolve("kustomization.yaml"), "bases:\n  - " + operator.toAbsolutePath().relativize(manifests.toAbsolutePath())
                + "\npatchesStrategicMerge:\n  - net-conf.yml\n  - daemonset.yml\n", StandardCharsets.UTF_8);
        Files.writeString(operator.resolve("net-conf.yml"), """
                kind: ConfigMap
                apiVersion: v1
                metadata:
                  name: kube-flannel-cfg
                  namespace: kube-flannel
                data:
                  net-conf.json: |
                    {"Network": "10.244.0.0/16", "EnableNFTables": false, "Backend": {"Type": "ipsec", "PSK": "%s"}}
                """.formatted(psk), StandardCharsets.UTF_8);
        Files.writeString(operator.resolve("daemonset.yml"), """
                apiVersion: apps/v1
                kind: DaemonSet
                metadata:
                  name: kube-flannel-ds
                  namespace: kube-flannel
                spec:
                  template:
                    spec:
                      containers:
                        - name: kube-flannel
                          securityContext:
                            privileged: false
                            capabilities:
                              add: ["NET_ADMIN", "NET_RAW", "NET_BIND_SERVICE"]
                """, StandardCharsets.UTF_8);
        RenderedManifests m = RenderedManifests.render(operator);
        Set<String> imagePlugins = new TreeSet<>();
        try (Stream<Path> s = Files.list(image.rootfs().resolve("usr/lib/ipsec/plugins"))) {
            s.map(p -> p.getFileName().toString().replaceFirst("^libstrongswan-", "").replaceFirst("\\.so$", "")).forEach(imagePlugins::add);
        }
        boolean esp = kernelHasEsp();
        try (DaemonSetCluster cluster = DaemonSetCluster.start(m, image, Path.of(System.getProperty("java.io.tmpdir")),
                NODES, PODS_PER_NODE, l -> System.out.println("daemonset ipsec: " + l))) {
            Map<DaemonSetCluster.Node, Long> charons = new java.util.LinkedHashMap<>();
            for (DaemonSetCluster.Node n : cluster.nodes()) {
                String log = n.daemon().logText();
                assertThat(log).as("%s's log", n.name()).contains("charon ready pid=").contains("version=5.")
                        .contains("ipsec network registered").doesNotContain(psk);
                Matcher started = Pattern.compile("charon started pid=(\\d+)").matcher(log);
                assertThat(started.find()).as("%s: the daemon logged charon's pid", n.name()).isTrue();
                long pid = Long.parseLong(started.group(1));
                charons.put(n, pid);
                // the image's charon: its executable is /usr/lib/ipsec/charon of the container's root, the daemon's root
                Path root = Path.of("/proc/" + pid + "/root");
                assertThat(Files.isSameFile(Path.of("/proc/" + pid + "/exe"), root.resolve("usr/lib/ipsec/charon")))
                        .as("%s: charon pid %d runs the container's /usr/lib/ipsec/charon", n.name(), pid).isTrue();
                assertThat(Files.isSameFile(root, Path.of("/proc/" + n.daemon().pid() + "/root")))
                        .as("%s: charon's root is kube-flannel's (the image), not this machine's", n.name()).isTrue();
                assertThat(Files.isSameFile(root, Path.of("/"))).isFalse();
                String maps = Files.readString(Path.of("/proc/" + pid + "/maps"));
                assertThat(maps).as("%s: charon's libraries", n.name()).contains("/usr/lib/ipsec/libcharon.so.0.0.0")
                        .contains("/usr/lib/ipsec/plugins/libstrongswan-vici.so").contains("libcrypto.so.3").contains("libgmp.so.10");
                // our strongswan.conf (in the node's /run/flannel) loads exactly the plugins the image carries
                String conf = Files.readString(n.host().path("/run/flannel/ipsec/strongswan.conf"));
                Matcher load = Pattern.compile("(?m)^\\s*load = (.*)$").matcher(conf);
                assertThat(load.find()).as("%s: load line in %s", n.name(), conf).isTrue();
                assertThat(new TreeSet<>(List.of(load.group(1).strip().split("\\s+")))).as("plugins loaded vs the image's")
                        .isEqualTo(imagePlugins);
                assertThat(cluster.kubeNode(n.name()).path("metadata").path("annotations").path("flannel.alpha.coreos.com/backend-type")
                        .asText()).as("%s's backend-type annotation", n.name()).isEqualTo("ipsec");
                assertThat(cluster.subnetEnv(n).get("FLANNEL_MTU")).as("%s: FLANNEL_MTU = 1500 - 77", n.name()).isEqualTo("1423");
                probesAnswer(cluster, n);
            }
            for (DaemonSetCluster.Node n : cluster.nodes()) {
                String me = ClusterNames.nodeIp(n.index());
                List<String> pols = Wait.until("the peers' XFRM policies on " + n.name(), Duration.ofSeconds(90),
                        () -> xfrmPolicies(n), p -> p.size() == 3 * (NODES - 1));
                for (DaemonSetCluster.Node peer : cluster.nodes()) {
                    if (peer == n) {
                        continue;
                    }
                    String them = ClusterNames.nodeIp(peer.index());
                    assertThat(String.join("\n", pols)).as("%s's policies to %s", n.name(), peer.name())
                            .contains("tmpl src " + me + " dst " + them, "tmpl src " + them + " dst " + me);
                    // upstream's connection name: ourIP-ourSubnet-peerSubnet-peerIP
                    String conn = me + "-" + cluster.lease(n).subnet() + "-" + cluster.lease(peer).subnet() + "-" + them;
                    // logged once the image's charon accepted the connection over VICI (its socket is in the
                    // container's mount namespace, out of this machine's swanctl's reach)
                    Wait.until(n.name() + "'s charon loads " + conn, Duration.ofSeconds(60),
                            () -> n.daemon().logText().contains("ipsec connection loaded name=" + conn));
                }
            }
            assertThat(cluster.pods()).hasSize(NODES * PODS_PER_NODE);
            if (esp) {
                PingMatrix matrix = cluster.pingMatrix();
                System.out.println("daemonset ipsec: ping matrix\n" + matrix.render());
                assertThat(matrix.failures()).as("pod pairs without an answer\n%s", matrix.render()).isEmpty();
            } else {
                System.out.println("daemonset ipsec: ping matrix not asserted: this kernel has no ESP (xfrm state proto esp refused)");
            }
            // the image's charon ends with the daemon: SIGTERM to kube-flannel, as kubelet stops the pod
            DaemonSetCluster.Node first = cluster.node(1);
            long charon = charons.get(first);
            Cmd.run(Duration.ofSeconds(10), List.of("kill", "-TERM", Long.toString(first.daemon().pid()))).orThrow();
            assertThat(first.daemon().awaitExit(Duration.ofSeconds(60))).as("kube-flannel exits on SIGTERM").isPresent();
            try {
                assertThat(ProcessHandle.of(charon).filter(ProcessHandle::isAlive)).as("the image's charon ended with the daemon").isEmpty();
                assertThat(first.daemon().logText()).contains("charon stopped pid=" + charon);
            } finally {
                ProcessHandle.of(charon).ifPresent(ProcessHandle::destroyForcibly); // not left behind if the assertion failed
            }
        }
    }

    /** Whether this kernel installs an ESP SA (module esp4), asked in a throwaway namespace. */
    private static boolean kernelHasEsp() throws Exception {
        String ns = org.jflannel.testsupport.netns.NetnsNames.unique("espchk");
        Cmd.run(Duration.ofSeconds(10), List.of("ip", "netns", "add", ns)).orThrow();
        try {
            return Cmd.run(Duration.ofSeconds(10), List.of("ip", "-n", ns, "xfrm", "state", "add", "src", "192.0.2.1", "dst", "192.0.2.2",
                    "proto", "esp", "spi", "0x100", "reqid", "11", "mode", "tunnel", "aead", "rfc4106(gcm(aes))",
                    "0x" + "11".repeat(20), "128")).ok();
        } finally {
            Cmd.run(Duration.ofSeconds(10), List.of("ip", "netns", "del", ns));
        }
    }

    /** Node {@code n}'s XFRM policy blocks with a template (charon's per-socket bypass policies have none). */
    private static List<String> xfrmPolicies(DaemonSetCluster.Node n) throws Exception {
        String text = Cmd.run(Duration.ofSeconds(30), List.of("ip", "-n", n.namespace(), "xfrm", "policy", "list")).stdout();
        return java.util.Arrays.stream(text.split("(?m)^(?=src )")).filter(b -> b.contains("tmpl ")).toList();
    }

    /** install-cni-plugin and install-cni put flannel and the ConfigMap's list on the node; it needs no JDK. */
    private static void installedPluginAndConflist(DaemonSetCluster.Node n, String cniConf) throws Exception {
        Path plugin = n.host().path("/opt/cni/bin/flannel");
        assertThat(plugin).as("installed plugin on %s", n.name()).isExecutable();
        Path conflist = n.host().path("/etc/cni/net.d/10-flannel.conflist");
        assertThat(Files.readString(conflist, StandardCharsets.UTF_8)).as("installed conflist on %s", n.name())
                .isEqualTo(cniConf);
        assertThat(n.cni().conflist()).isEqualTo(conflist);

        Cmd.Result noJava = n.cni().run(List.of("PATH=" + HostSideCni.PATH), List.of("/bin/sh", "-c",
                "if java -version >/dev/null 2>&1; then echo java-found; else echo no-java; fi"), null);
        assertThat(noJava.stdout().strip()).as("a JDK visible where the plugin runs on %s", n.name()).isEqualTo("no-java");

        String version = JSON.readTree(cniConf).path("cniVersion").asText();
        Cmd.Result r = n.cni().exec("flannel", Map.of("CNI_COMMAND", "VERSION"), "{\"cniVersion\":\"" + version + "\"}")
                .orThrow();
        JsonNode answer = JSON.readTree(r.stdout());
        assertThat(answer.path("supportedVersions").toString()).as("VERSION of the installed plugin on %s", n.name())
                .contains("\"" + version + "\"");
    }

    /**
     * Least privilege: an unprivileged kube-flannel runs with exactly its manifest's
     * {@code capabilities.add}, effective and bounding (the harness gives no more), and works.
     */
    private static void exactlyTheManifestsCapabilities(DaemonSetCluster cluster, DaemonSetCluster.Node n) throws Exception {
        var c = ManifestChecks.flannel(cluster.podSpec());
        var sc = c.getSecurityContext();
        if (sc == null || Boolean.TRUE.equals(sc.getPrivileged())) {
            return;
        }
        long expected = 0;
        for (String cap : sc.getCapabilities().getAdd()) {
            expected |= 1L << CAPABILITY_BITS.get(cap.replaceFirst("^CAP_", ""));
        }
        Map<String, Long> caps = new java.util.HashMap<>();
        for (String l : Files.readAllLines(Path.of("/proc/" + n.daemon().pid() + "/status"))) {
            if (l.startsWith("Cap")) {
                caps.put(l.substring(0, l.indexOf(':')), Long.parseUnsignedLong(l.substring(l.indexOf(':') + 1).strip(), 16));
            }
        }
        assertThat(caps.get("CapEff")).as("%s: kube-flannel's effective capabilities vs %s", n.name(), sc.getCapabilities().getAdd())
                .isEqualTo(expected);
        assertThat(caps.get("CapBnd")).as("%s: kube-flannel's bounding set", n.name()).isEqualTo(expected);
    }

    /** linux/capability.h numbers of the capabilities our manifests name. */
    private static final Map<String, Integer> CAPABILITY_BITS = Map.of("NET_ADMIN", 12, "NET_RAW", 13, "SYS_ADMIN", 21,
            "BPF", 39, "PERFMON", 38);

    private static void probesAnswer(DaemonSetCluster cluster, DaemonSetCluster.Node n) throws Exception {
        DaemonSetCluster.Probe healthz = cluster.probe(n, "/healthz");
        DaemonSetCluster.Probe readyz = cluster.probe(n, "/readyz");
        assertThat(healthz.status()).as("/healthz on %s", n.name()).isEqualTo(200);
        assertThat(healthz.body()).contains("flanneld is running");
        assertThat(readyz.status()).as("/readyz on %s", n.name()).isEqualTo(200);
        assertThat(readyz.body()).contains("flanneld is ready");
    }

    private static void subnetEnvAndDevice(DaemonSetCluster cluster, DaemonSetCluster.Node n, JsonNode netConf)
            throws Exception {
        Map<String, String> env = cluster.subnetEnv(n);
        assertThat(env.get("FLANNEL_NETWORK")).as("subnet.env on %s", n.name()).isEqualTo(netConf.path("Network").asText());
        assertThat(env.get("FLANNEL_IPMASQ")).isEqualTo("true"); // --ip-masq in the manifest's args
        Ip4Net subnet = Ip4Net.parse(env.get("FLANNEL_SUBNET"));
        if (cluster.kubeMode()) {
            String podCidr = cluster.kubeNode(n.name()).path("spec").path("podCIDR").asText();
            assertThat(subnet).as("%s's subnet.env vs its Node's podCIDR", n.name()).isEqualTo(Ip4Net.parse(podCidr));
        }
        String device = switch (netConf.path("Backend").path("Type").asText()) {
            case "udp" -> "flannel0";
            case "wireguard" -> "flannel-wg";
            case "vxlan" -> "flannel.1";
            default -> null; // host-gw and others: routes only
        };
        if (device != null) {
            assertThat(Cmd.run(Duration.ofSeconds(10), List.of("ip", "-n", n.namespace(), "link", "show", device)).ok())
                    .as("%s on %s", device, n.name()).isTrue();
        }
    }

    /** The daemons' real requests need every grant of the rendered ClusterRole, and nothing beyond it. */
    private static void callsAreExactlyTheClusterRole(DaemonSetCluster cluster, RenderedManifests m) {
        SortedSet<String> used = cluster.apiCalls().stream().filter(c -> !c.resource().isEmpty())
                .map(c -> c.verb() + " " + c.group() + "/" + c.rbacResource()).collect(Collectors.toCollection(TreeSet::new));
        SortedSet<String> granted = new TreeSet<>();
        for (PolicyRule r : m.one(ClusterRole.class, "flannel").getRules()) {
            r.getApiGroups().forEach(g -> r.getResources().forEach(res -> r.getVerbs().forEach(v -> granted.add(v + " " + g + "/" + res))));
        }
        System.out.println("daemonset: API calls of the daemons " + used + ", ClusterRole " + granted);
        assertThat(used).as("calls made by kube-flannel vs ClusterRole flannel").containsExactlyElementsOf(granted);
        List<ApiCall> patches = cluster.apiCalls().stream().filter(c -> c.verb().equals("patch")).toList();
        assertThat(patches).isNotEmpty().allSatisfy(c -> assertThat(c.contentType()).startsWith("application/strategic-merge-patch+json"));
    }
}
