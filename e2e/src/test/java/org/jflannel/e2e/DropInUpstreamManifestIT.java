package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.PodSpec;
import io.fabric8.kubernetes.api.model.rbac.ClusterRole;
import io.fabric8.kubernetes.api.model.rbac.PolicyRule;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.jflannel.testbase.NetnsPrivilege;
import org.jflannel.testsupport.cluster.ClusterOptions;
import org.jflannel.testsupport.cluster.DaemonSetCluster;
import org.jflannel.testsupport.cluster.PingMatrix;
import org.jflannel.testsupport.cluster.UnpackedImage;
import org.jflannel.testsupport.cluster.UpstreamFlannel;
import org.jflannel.testsupport.image.ImageRootfs;
import org.jflannel.testsupport.manifests.RenderedManifests;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * jflannel as a drop-in for upstream flannel: upstream's own kube-flannel.yml (v0.28.9 and v0.20.2,
 * {@code ../shared/upstream/}) with nothing changed but {@code image:} lines, run by the DaemonSet
 * harness on three fake hosts (kube mode, the mock API server), init containers and kube-flannel
 * exactly as written there: upstream's {@code cp -f /flannel /opt/cni/bin/flannel}, {@code install-conf}
 * (v0.28.9) or {@code cp} (v0.20.2) of the conflist, {@code /opt/bin/flanneld} with upstream's flags,
 * and upstream's securityContext, which the harness enforces as exactly {@code NET_ADMIN} and
 * {@code NET_RAW}. Full swap: every image ours. Half swap: the flannel image ours, the plugin image
 * upstream's Go plugin ({@code $JFLANNEL_UPSTREAM_DIR/flannel} at {@code /flannel}), which reads our
 * daemon's subnet.env; skipped, saying so, when the plugin is not provided. Each: the full pod ping matrix (3 nodes × 2 pods, 30 pairs).
 */
@Tag("e2e")
class DropInUpstreamManifestIT {
    static final String OURS = "ghcr.io/jflannel/jflannel:0.1.0";
    private static final int NODES = 3;
    private static final int PODS_PER_NODE = 2;
    /** CAP_NET_ADMIN (12) and CAP_NET_RAW (13): upstream's securityContext, and nothing else. */
    private static final long NET_ADMIN_AND_RAW = (1L << 12) | (1L << 13);
    private static final Pattern IMAGE_LINE = Pattern.compile("(?m)^(\\s*(?:- )?)image: *(\\S+)\\s*$");
    private static Path work;
    private static Path upstream;
    private static UnpackedImage image;
    private static UnpackedImage upstreamPluginImage;

    @BeforeAll
    static void unpack() throws Exception {
        NetnsPrivilege.require();
        upstream = UpstreamFlannel.dataDir(ClusterOptions.findProjectRoot());
        work = Files.createTempDirectory("jflannel-dropin");
        image = UnpackedImage.unpack(UnpackedImage.archive(), work.resolve("image"));
    }

    /**
     * Upstream's plugin image, as far as its init container goes: /flannel (the Go plugin from
     * {@code JFLANNEL_UPSTREAM_DIR}) and a cp; made on first use; skips the half swap when the plugin is not provided.
     */
    private static synchronized UnpackedImage upstreamPluginImage() throws Exception {
        Path plugin = UpstreamFlannel.plugin();
        if (upstreamPluginImage == null) {
            Path layer = Files.createDirectories(work.resolve("upstream-plugin-layer"));
            Files.copy(plugin, layer.resolve("flannel"), java.nio.file.StandardCopyOption.COPY_ATTRIBUTES);
            upstreamPluginImage = image.withLayer(layer);
        }
        return upstreamPluginImage;
    }

    @AfterAll
    static void remove() throws Exception {
        if (work != null) {
            ImageRootfs.delete(work);
        }
    }

    static Stream<String> versions() {
        return Stream.of("v0.28.9", "v0.20.2");
    }

    @ParameterizedTest(name = "full swap, kube-flannel.yml {0}")
    @MethodSource("versions")
    void upstreamManifestWithEveryImageOursGivesAFullPingMatrix(String version) throws Exception {
        Path file = upstream.resolve("kube-flannel-" + version + ".yml");
        String original = Files.readString(file, StandardCharsets.UTF_8);
        RenderedManifests m = RenderedManifests.parse(file, withImages(original, img -> OURS));
        sameSpecButImages(RenderedManifests.parse(file, original).daemonSet().getSpec().getTemplate().getSpec(),
                m.daemonSet().getSpec().getTemplate().getSpec());

        try (DaemonSetCluster cluster = DaemonSetCluster.start(m, image, work, NODES, PODS_PER_NODE,
                l -> System.out.println("dropin full " + version + ": " + l))) {
            for (DaemonSetCluster.Node n : cluster.nodes()) {
                assertThat(Files.mismatch(n.host().path("/opt/cni/bin/flannel"), image.rootfs().resolve("flannel")))
                        .as("%s: /opt/cni/bin/flannel is the image's /flannel, copied by upstream's cp", n.name()).isEqualTo(-1L);
                assertThat(n.host().path("/etc/cni/net.d/10-flannel.conflist")).isRegularFile();
                exactlyUpstreamsCapabilities(n);
                if (cluster.hasProbes()) { // v0.28.9: --healthz-port=8081; v0.20.2 sets no port and no probes
                    assertThat(cluster.probePort()).isEqualTo(8081);
                    assertThat(cluster.probe(n, "/healthz").status()).as("/healthz on %s", n.name()).isEqualTo(200);
                    assertThat(cluster.probe(n, "/readyz").status()).as("/readyz on %s", n.name()).isEqualTo(200);
                }
            }
            fullMatrix(cluster, "full " + version);
            // upstream's manifest as it is (no mount of ours) gets the CNI fast path: every ADD was handed to the daemon
            // over /run/flannel/cni.sock, so no ADD started the plugin's own JVM and its bundle was never unpacked
            for (DaemonSetCluster.Node n : cluster.nodes()) {
                assertThat(n.cni().hostFile("/run/flannel/cni.sock")).as("%s: the daemon's CNI socket", n.name()).exists();
                try (Stream<Path> s = Files.list(n.host().path("/opt/cni/bin"))) {
                    assertThat(s.map(p -> p.getFileName().toString()).filter(x -> x.matches("jflannel-[0-9a-f]{12}")).toList())
                            .as("%s: no bundle unpacked beside /opt/cni/bin/flannel (no ADD ran the plugin's own JVM)", n.name())
                            .isEmpty();
                }
                if (cluster.hasProbes()) { // v0.20.2's manifest gives the daemon no health port, so no /metrics to ask
                    Map<String, Double> requests = CniFastPathOnFakeHostsIT.requests(cluster, n);
                    assertThat(requests.get("served")).as("%s: ADDs the daemon served", n.name()).isGreaterThanOrEqualTo(PODS_PER_NODE);
                    assertThat(requests.get("fallback")).as("%s: requests told to run the plugin's own JVM", n.name()).isZero();
                }
            }
            callsWithinUpstreamsClusterRole(cluster, m);
        }
    }

    /**
     * Issue 40: upstream's kube-flannel.yml (v0.28.9) with our image and its net-conf.json's {@code Backend.Type}
     * switched to udp or wireguard, and nothing else changed (no FLANNELD_JIT, which only our overlays ever set):
     * the launcher reads the mounted net-conf.json and starts the JVM with C2, the daemon confirms the choice
     * against the config it parsed (no relaunch), says so in its start-up line, and the pods reach each other. (The fake hosts' containers see this machine's /dev, so /dev/net/tun is there without a mount; a real
     * runtime needs the overlays' hostPath for it.)
     */
    @ParameterizedTest(name = "kube-flannel.yml v0.28.9 with Backend.Type {0}")
    @org.junit.jupiter.params.provider.ValueSource(strings = {"udp", "wireguard"})
    void upstreamManifestSwitchedToAPacketPathBackendRunsTheDaemonWithC2(String backend) throws Exception {
        Path file = upstream.resolve("kube-flannel-v0.28.9.yml");
        String original = Files.readString(file, StandardCharsets.UTF_8);
        assertThat(original).contains("\"Type\": \"vxlan\"");
        RenderedManifests m = RenderedManifests.parse(file, withImages(original, img -> OURS)
                .replace("\"Type\": \"vxlan\"", "\"Type\": \"" + backend + "\""));
        assertThat(ManifestChecks.flannel(m.daemonSet().getSpec().getTemplate().getSpec()).getEnv())
                .noneMatch(e -> e.getName().equals("FLANNELD_JIT"));
        String reason = backend.equals("udp") ? "Backend.Type=udp: the daemon forwards every packet"
                : "Backend.Type=wireguard in userspace: the daemon seals every packet";
        try (DaemonSetCluster cluster = DaemonSetCluster.start(m, image, work, NODES, PODS_PER_NODE,
                l -> System.out.println("dropin " + backend + ": " + l))) {
            fullMatrix(cluster, backend);
            for (DaemonSetCluster.Node n : cluster.nodes()) {
                n.daemon().logTail(5000).lines().filter(l -> l.contains("JIT jit=")).forEach(l -> System.out.println(n.name() + ": " + l));
                assertThat(n.daemon().logTail(5000)).as("%s's start-up", n.name())
                        .containsPattern("JIT jit=c2 reason=\"" + Pattern.quote(reason) + "\" chosenBy=launcher")
                        .doesNotContain("JIT relaunching"); // the launcher read /etc/kube-flannel/net-conf.json
                exactlyUpstreamsCapabilities(n);
            }
        }
    }

    @ParameterizedTest(name = "half swap, kube-flannel.yml {0}")
    @MethodSource("versions")
    void upstreamManifestWithOurFlannelImageAndUpstreamsPluginGivesAFullPingMatrix(String version) throws Exception {
        UnpackedImage upstreamPlugin = upstreamPluginImage();
        Path file = upstream.resolve("kube-flannel-" + version + ".yml");
        String original = Files.readString(file, StandardCharsets.UTF_8);
        String pluginImage = RenderedManifests.parse(file, original).daemonSet().getSpec().getTemplate().getSpec()
                .getInitContainers().stream().filter(c -> c.getName().equals("install-cni-plugin")).findFirst().orElseThrow()
                .getImage();
        RenderedManifests m = RenderedManifests.parse(file, withImages(original, img -> img.equals(pluginImage) ? img : OURS));

        try (DaemonSetCluster cluster = DaemonSetCluster.start(m, image, Map.of(pluginImage, upstreamPlugin), work, NODES,
                PODS_PER_NODE, l -> System.out.println("dropin half " + version + ": " + l))) {
            for (DaemonSetCluster.Node n : cluster.nodes()) {
                assertThat(Files.mismatch(n.host().path("/opt/cni/bin/flannel"), UpstreamFlannel.plugin()))
                        .as("%s: /opt/cni/bin/flannel is upstream's Go plugin", n.name()).isEqualTo(-1L);
                exactlyUpstreamsCapabilities(n);
            }
            fullMatrix(cluster, "half " + version);
        }
    }

    /** {@code yaml} with every {@code image:} value mapped (comments and everything else as they are). */
    static String withImages(String yaml, java.util.function.UnaryOperator<String> map) {
        Matcher mt = IMAGE_LINE.matcher(yaml);
        StringBuilder out = new StringBuilder();
        while (mt.find()) {
            mt.appendReplacement(out, Matcher.quoteReplacement(mt.group(1) + "image: " + map.apply(mt.group(2))));
        }
        return mt.appendTail(out).toString();
    }

    /** The pod spec is upstream's but for images: commands, args, env, mounts, securityContext, probes. */
    private static void sameSpecButImages(PodSpec upstreamSpec, PodSpec ours) {
        List<Container> a = new ArrayList<>(upstreamSpec.getInitContainers());
        a.addAll(upstreamSpec.getContainers());
        List<Container> b = new ArrayList<>(ours.getInitContainers());
        b.addAll(ours.getContainers());
        assertThat(b).hasSameSizeAs(a);
        for (int i = 0; i < a.size(); i++) {
            Container x = a.get(i);
            Container y = b.get(i);
            assertThat(y.getImage()).isEqualTo(OURS);
            y.setImage(x.getImage());
            assertThat(y).as("container %s but its image", x.getName()).isEqualTo(x);
            y.setImage(OURS);
        }
    }

    /** The daemon's process holds NET_ADMIN and NET_RAW, effective and bounding, and nothing else. */
    private static void exactlyUpstreamsCapabilities(DaemonSetCluster.Node n) throws Exception {
        Map<String, Long> caps = Files.readAllLines(Path.of("/proc/" + n.daemon().pid() + "/status")).stream()
                .filter(l -> l.startsWith("Cap")).collect(Collectors.toMap(l -> l.substring(0, l.indexOf(':')),
                        l -> Long.parseUnsignedLong(l.substring(l.indexOf(':') + 1).strip(), 16)));
        assertThat(caps.get("CapEff")).as("%s: kube-flannel's effective capabilities", n.name()).isEqualTo(NET_ADMIN_AND_RAW);
        assertThat(caps.get("CapBnd")).as("%s: kube-flannel's bounding set", n.name()).isEqualTo(NET_ADMIN_AND_RAW);
    }

    private static void fullMatrix(DaemonSetCluster cluster, String what) throws Exception {
        PingMatrix matrix = cluster.pingMatrix();
        System.out.println("dropin " + what + ": ping matrix\n" + matrix.render());
        assertThat(cluster.pods()).hasSize(NODES * PODS_PER_NODE);
        assertThat(matrix.failures()).as("pod pairs without an answer\n%s", matrix.render()).isEmpty();
    }

    /** Every request our daemons made is granted by upstream's ClusterRole (else a real API server says 403). */
    private static void callsWithinUpstreamsClusterRole(DaemonSetCluster cluster, RenderedManifests m) {
        SortedSet<String> used = cluster.apiCalls().stream().filter(c -> !c.resource().isEmpty())
                .map(c -> c.verb() + " " + c.group() + "/" + c.rbacResource()).collect(Collectors.toCollection(TreeSet::new));
        SortedSet<String> granted = new TreeSet<>();
        for (PolicyRule r : m.one(ClusterRole.class, "flannel").getRules()) {
            r.getApiGroups().forEach(g -> r.getResources().forEach(res -> r.getVerbs().forEach(v -> granted.add(v + " " + g + "/" + res))));
        }
        assertThat(granted).as("upstream's ClusterRole flannel vs the daemons' calls").containsAll(used);
    }
}
