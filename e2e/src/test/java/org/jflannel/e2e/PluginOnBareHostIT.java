package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Stream;
import org.jflannel.core.Ip4Net;
import org.jflannel.testbase.NetnsPrivilege;
import org.jflannel.testsupport.cluster.ClusterOptions;
import org.jflannel.testsupport.cluster.Cmd;
import org.jflannel.testsupport.cluster.DaemonSetCluster;
import org.jflannel.testsupport.cluster.Pod;
import org.jflannel.testsupport.cluster.UnpackedImage;
import org.jflannel.testsupport.cluster.Wait;
import org.jflannel.testsupport.image.ImageRootfs;
import org.jflannel.testsupport.manifests.RenderedManifests;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The installed CNI plugin needs nothing on the host: on node 1 of a two-node DaemonSet cluster (from
 * {@code manifests/}, run from the image), a {@link BareHost} root with only CNI's directories and no
 * shell, libc or {@code /usr}; in it, the plugin as install-cni-plugin left it ({@code flannel} and its
 * unpacked bundle) and, in a second root, the image's {@code /flannel} alone (what upstream's init
 * container copies; its first run unpacks the bundle), each beside bridge, host-local, loopback and
 * portmap built static from Debian's Go sources ({@code bin/static-cni-plugins}). Debian's libcni
 * (through {@code tools/libcni-driver}, static, {@code bin/libcni-driver}, entering the root itself)
 * runs ADD, CHECK and DEL of the conflist in the root, and the pod pings the pod of node 2; GC and
 * STATUS go through the driver too (libcni 1.2's way), over one-plugin conflists of flannel alone
 * at cniVersion 1.1.0 (Debian's bridge 1.1.1, which GC is forwarded to, refuses 1.1.0, so GC's
 * subnetFile does not exist and the forward is skipped); VERSION goes to the plugin directly. The node's
 * flanneld serves the first root's ADD on the fast path (issue 37: its /metrics counts it); the second
 * root runs with {@code JFLANNEL_CNI_FAST=0}, so the libcni chain is seen in both modes and its first
 * run still unpacks the bundle.
 */
@Tag("e2e")
class PluginOnBareHostIT {
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration WITHIN = Duration.ofMinutes(5);
    private static Path work;
    private static UnpackedImage image;
    private static Path staticPlugins;
    private static Path driver;

    @BeforeAll
    static void prepare() throws Exception {
        NetnsPrivilege.require();
        Path root = ClusterOptions.findProjectRoot();
        work = Files.createTempDirectory("jflannel-bare-host");
        image = UnpackedImage.unpack(UnpackedImage.archive(), work.resolve("image"));
        // the four delegates, static; cached across runs (the build takes a minute)
        staticPlugins = Path.of(System.getProperty("jflannel.cache", "/var/cache/jflannel"), "static-cni-plugins-1.1.1");
        Cmd.run(WITHIN, List.of(root.resolve("bin/static-cni-plugins").toString(), staticPlugins.toString())).orThrow();
        for (String p : List.of("bridge", "host-local", "loopback", "portmap")) {
            String file = Cmd.run(Duration.ofSeconds(10), List.of("file", "-b", staticPlugins.resolve(p).toString())).orThrow().stdout();
            assertThat(file).as("%s built static", p).contains("statically linked");
        }
        // the runtime's side: Debian's libcni in a static driver, run from outside the bare root (cached too)
        Path driverDir = Path.of(System.getProperty("jflannel.cache", "/var/cache/jflannel"), "libcni-driver");
        Cmd.run(WITHIN, List.of(root.resolve("bin/libcni-driver").toString(), driverDir.toString())).orThrow();
        driver = driverDir.resolve("libcni-driver");
        String file = Cmd.run(Duration.ofSeconds(10), List.of("file", "-b", driver.toString())).orThrow().stdout();
        assertThat(file).as("libcni-driver built static").contains("statically linked");
    }

    @AfterAll
    static void remove() throws Exception {
        if (work != null) {
            ImageRootfs.delete(work);
        }
    }

    @Test
    void bothInstallPathsAttachAndDetachAPodOnAHostWithNothingButCni() throws Exception {
        RenderedManifests m = RenderedManifests.render(ManifestRenderIT.MANIFESTS);
        try (DaemonSetCluster cluster = DaemonSetCluster.start(m, image, work, 2, 1,
                l -> System.out.println("bare-host: " + l))) {
            DaemonSetCluster.Node node = cluster.nodes().get(0);
            Pod remote = cluster.pods().stream().filter(p -> p.node() == 2).findFirst().orElseThrow();
            Path installedBin = node.host().path("/opt/cni/bin");
            List<Path> installed;
            try (Stream<Path> s = Files.list(installedBin)) {
                installed = s.filter(p -> p.getFileName().toString().equals("flannel")
                        || p.getFileName().toString().matches("jflannel-[0-9a-f]{12}")).sorted().toList();
            }
            assertThat(installed).as("what install-cni-plugin put on the node").hasSize(2);
            // cniVersion 1.0.0: the newest Debian's bridge knows, and CHECK needs >= 0.4.0
            ObjectNode conflist = (ObjectNode) JSON.readTree(m.configMap("kube-flannel-cfg").getData().get("cni-conf.json"));
            conflist.put("cniVersion", "1.0.0");
            Ip4Net subnet = Ip4Net.parse(cluster.subnetEnv(node).get("FLANNEL_SUBNET"));

            attachPingDetach(cluster, node, "a", installed, conflist.toString(), remote, subnet, false);
            attachPingDetach(cluster, node, "b", List.of(image.rootfs().resolve("flannel")), conflist.toString(), remote, subnet,
                    true);
        }
    }

    private static void attachPingDetach(DaemonSetCluster cluster, DaemonSetCluster.Node node, String label, List<Path> plugin,
                                         String conflist, Pod remote, Ip4Net subnet, boolean unpacksItself) throws Exception {
        String what = unpacksItself ? "the image's /flannel alone" : "flannel as install-cni-plugin installed it";
        BareHost bare = BareHost.create(work.resolve("bare-" + label), node.namespace(), node.host(), plugin, staticPlugins,
                conflist, driver);
        if (unpacksItself) {
            bare.withoutFastPath(); // the node's flanneld would serve it (issue 37): this case is the plugin's own JVM
        }
        double servedBefore = CniFastPathOnFakeHostsIT.requests(cluster, node).get("served");
        try (Stream<Path> s = Files.list(bare.root)) {
            assertThat(s.map(p -> p.getFileName().toString()).sorted().toList()).as("the bare root's top level")
                    .containsExactlyElementsOf(BareHost.TOP_LEVEL);
        }
        assertThat(bare.root.resolve("opt/cni/bin/flannel")).isExecutable();
        String podNs = "jf" + cluster.runId() + "bare" + label;
        Cmd.run(Duration.ofSeconds(10), List.of("ip", "netns", "add", podNs)).orThrow();
        try {
            Set<String> scratchBefore = scratch(node);
            Cmd.Result add = bare.libcni("add", podNs);
            assertThat(add.exitCode()).as("libcni add with %s on a bare host: %s", what, add.stderr()).isZero();
            String ip = org.jflannel.testsupport.cluster.HostSideCni.ipv4(JSON.readTree(add.stdout()));
            assertThat(subnet.contains(Ip4Net.parseAddress(ip))).as("%s in %s", ip, subnet).isTrue();
            System.out.println("bare-host " + label + ": " + what + ": ADD gave " + ip + "; ping " + remote.name() + " " + remote.ip());
            assertThat(CniFastPathOnFakeHostsIT.requests(cluster, node).get("served") - servedBefore)
                    .as("ADDs the node's flanneld served on the fast path (%s)", what).isEqualTo(unpacksItself ? 0.0 : 1.0);
            if (unpacksItself) {
                try (Stream<Path> s = Files.list(bare.root.resolve("opt/cni/bin"))) {
                    assertThat(s.map(p -> p.getFileName().toString()).filter(n -> n.matches("jflannel-[0-9a-f]{12}")).toList())
                            .as("the bundle the first run unpacked beside /opt/cni/bin/flannel").hasSize(1);
                }
            }
            Wait.until(podNs + " pings " + remote.name() + " on node 2", Duration.ofSeconds(30), () -> Cmd.run(
                    Duration.ofSeconds(10), List.of("ip", "netns", "exec", podNs, "ping", "-n", "-q", "-c", "1", "-W", "2",
                            remote.ip())).ok());

            Cmd.Result check = bare.libcni("check", podNs);
            assertThat(check.exitCode()).as("libcni check: %s", check.stderr()).isZero();

            Set<String> added = new HashSet<>(scratch(node));
            added.removeAll(scratchBefore);
            assertThat(added).as("the scratch file of the ADD").hasSize(1);
            String containerId = added.iterator().next();
            gcAndStatusAndVersion(bare, node, containerId);

            Cmd.Result del = bare.libcni("del", podNs);
            assertThat(del.exitCode()).as("libcni del: %s", del.stderr()).isZero();
            assertThat(scratch(node)).doesNotContain(containerId);
            assertThat(Cmd.run(Duration.ofSeconds(10), List.of("ip", "-n", podNs, "link", "show", "eth0")).ok())
                    .as("eth0 in %s after DEL", podNs).isFalse();
        } finally {
            Cmd.run(Duration.ofSeconds(10), List.of("ip", "netns", "del", podNs));
        }
    }

    /**
     * GC through the driver with the ADD's container among the valid attachments and a stale scratch file
     * beside it (not forwarded: no subnet file, as Debian's bridge refuses 1.1.0), STATUS through the
     * driver, each over a one-plugin conflist of flannel at 1.1.0 (the driver injects name, cniVersion
     * and the valid attachments, as libcni 1.2 does); VERSION straight to the plugin.
     */
    private static void gcAndStatusAndVersion(BareHost bare, DaemonSetCluster.Node node, String containerId) throws Exception {
        Path stale = node.host().path("/var/lib/cni/flannel/stale-" + containerId.substring(0, 8));
        Files.writeString(stale, "{}");
        String gcDir = bare.writeNetconf("/tmp/gc.d", "10-flannel.conflist", "{\"cniVersion\":\"1.1.0\",\"name\":\"cbr0\",\"plugins\":["
                + "{\"type\":\"flannel\",\"subnetFile\":\"/run/flannel/none.env\",\"delegate\":{}}]}");
        Cmd.Result gc = bare.libcni(gcDir, List.of("--valid", containerId + "/eth0", "gc", "cbr0"));
        assertThat(gc.exitCode()).as("GC: %s %s", gc.stdout(), gc.stderr()).isZero();
        assertThat(stale).as("stale scratch file after GC").doesNotExist();
        assertThat(scratch(node)).as("the live attachment's scratch file after GC").contains(containerId);

        String statusDir = bare.writeNetconf("/tmp/status.d", "10-flannel.conflist", "{\"cniVersion\":\"1.1.0\",\"name\":\"cbr0\","
                + "\"plugins\":[{\"type\":\"flannel\",\"delegate\":{}}]}");
        Cmd.Result status = bare.libcni(statusDir, List.of("status", "cbr0"));
        assertThat(status.exitCode()).as("STATUS: %s %s", status.stdout(), status.stderr()).isZero();

        Cmd.Result version = bare.chrooted(Map.of("CNI_COMMAND", "VERSION"), List.of("/opt/cni/bin/flannel"),
                "{\"cniVersion\":\"1.1.0\"}");
        assertThat(version.exitCode()).as("VERSION: %s", version.stderr()).isZero();
        JsonNode v = JSON.readTree(version.stdout());
        assertThat(v.path("supportedVersions").toString()).contains("\"1.1.0\"", "\"0.3.1\"");
    }

    /** The node's flannel scratch files (one per attached container), by container ID. */
    private static Set<String> scratch(DaemonSetCluster.Node node) throws IOException {
        Path dir = node.host().path("/var/lib/cni/flannel");
        if (!Files.isDirectory(dir)) {
            return Set.of();
        }
        try (Stream<Path> s = Files.list(dir)) {
            return new HashSet<>(s.map(p -> p.getFileName().toString()).filter(n -> !n.startsWith(".")).toList());
        }
    }
}
