package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jflannel.testbase.NetnsPrivilege;
import org.jflannel.testsupport.cluster.Cmd;
import org.jflannel.testsupport.cluster.ContinuousPings;
import org.jflannel.testsupport.cluster.DaemonSetCluster;
import org.jflannel.testsupport.cluster.HostSideCni;
import org.jflannel.testsupport.cluster.NodeLease;
import org.jflannel.testsupport.cluster.PingTimeline;
import org.jflannel.testsupport.cluster.UnpackedImage;
import org.jflannel.testsupport.image.ImageRootfs;
import org.jflannel.testsupport.manifests.RenderedManifests;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The CNI plugin's fast path (issue 37) on fake hosts running manifests/ from the image, no mount added:
 * flanneld's socket appears in the host's /run/flannel (0600); while the pods of two nodes ping each
 * other continuously, {@link #IN_FLIGHT} ADDs at once on one node through the installed plugin and
 * conflist, then as many DELs, are all served by the daemon (its /metrics: none told to fall back),
 * give distinct addresses, and leave the lease and the pings alone (no gap over {@link #MAX_GAP}:
 * a bound against the daemon's lease and data-plane work being blocked, not a benchmark).
 */
@Tag("e2e")
class CniFastPathOnFakeHostsIT {
    private static final int IN_FLIGHT = 50;
    private static final Duration INTERVAL = Duration.ofMillis(200);
    private static final Duration PINGS_AT_MOST = Duration.ofMinutes(5);
    private static final Duration MAX_GAP = Duration.ofSeconds(3);
    private static final Pattern SERVED = Pattern.compile("flanneld_cni_requests_total\\{outcome=\"(\\w+)\"} ([0-9.e+]+)");
    private static final ObjectMapper JSON = new ObjectMapper();
    private static Path unpackDir;
    private static UnpackedImage image;

    @BeforeAll
    static void unpackImage() throws Exception {
        NetnsPrivilege.require();
        unpackDir = Files.createTempDirectory("jflannel-image");
        image = UnpackedImage.unpack(UnpackedImage.archive(), unpackDir);
    }

    @AfterAll
    static void removeRootfs() throws Exception {
        if (unpackDir != null) {
            ImageRootfs.delete(unpackDir);
        }
    }

    @Test
    void fiftyAddsAtOnceAreServedByTheDaemonWhileItsPodsKeepPinging() throws Exception {
        RenderedManifests m = RenderedManifests.render(ManifestRenderIT.MANIFESTS);
        try (DaemonSetCluster cluster = DaemonSetCluster.start(m, image, Path.of(System.getProperty("java.io.tmpdir")),
                2, 1, l -> System.out.println("cni-fast-path: " + l))) {
            DaemonSetCluster.Node n = cluster.nodes().get(0);
            Path socket = n.cni().hostFile("/run/flannel/cni.sock");
            assertThat(socket).exists();
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(socket))).isEqualTo("rw-------");
            NodeLease lease = cluster.lease(n);
            Map<String, Double> before = requests(cluster, n);
            assertThat(before.get("served")).as("the cluster's own pod on this node, attached on the fast path").isPositive();

            List<String> netns = new ArrayList<>();
            ExecutorService pool = Executors.newFixedThreadPool(IN_FLIGHT, r -> new Thread(r, "cni-storm"));
            try (ContinuousPings pings = ContinuousPings.start(cluster.pods(), Files.createTempDirectory("cni-fast-pings"),
                    INTERVAL, PINGS_AT_MOST)) {
                for (int i = 0; i < IN_FLIGHT; i++) {
                    String ns = cluster.runId() + "-fp" + i;
                    Cmd.run(Duration.ofSeconds(10), List.of("ip", "netns", "add", ns), Map.of(), "").orThrow();
                    netns.add(ns);
                }
                List<Future<String>> adds = new ArrayList<>();
                for (String ns : netns) {
                    adds.add(pool.submit(() -> HostSideCni.ipv4(n.cni().add(ns))));
                }
                List<String> addresses = new ArrayList<>();
                for (Future<String> f : adds) {
                    addresses.add(f.get(5, TimeUnit.MINUTES));
                }
                assertThat(addresses).hasSize(IN_FLIGHT).doesNotHaveDuplicates();
                List<Future<Cmd.Result>> dels = new ArrayList<>();
                String flannelConf = flannelConf(n.cni());
                for (String ns : netns) {
                    dels.add(pool.submit(() -> n.cni().exec("flannel", Map.of("CNI_COMMAND", "DEL", "CNI_CONTAINERID", ns,
                            "CNI_NETNS", "/run/netns/" + ns, "CNI_IFNAME", "eth0"), flannelConf).orThrow()));
                }
                for (Future<Cmd.Result> f : dels) {
                    assertThat(f.get(5, TimeUnit.MINUTES).stdout()).isEmpty();
                }
                Map<String, Double> after = requests(cluster, n);
                assertThat(after.get("served") - before.get("served")).as("ADDs and DELs the daemon served").isEqualTo(2.0 * IN_FLIGHT);
                assertThat(after.get("fallback")).as("requests told to run the plugin's own JVM").isZero();
                assertThat(n.cni().hostFile("/var/lib/cni/flannel")).isDirectoryNotContaining(p -> p.getFileName().toString().contains("-fp"));
                for (PingTimeline t : pings.stop()) {
                    System.out.println("cni-fast-path: " + t.pair() + " longest gap " + t.longestGap().toMillis() + " ms, "
                            + t.replies().size() + " replies");
                    assertThat(t.longestGap()).as("%s: longest run without a reply", t.pair()).isLessThanOrEqualTo(MAX_GAP);
                }
            } finally {
                pool.shutdownNow();
                for (String ns : netns) {
                    Cmd.run(Duration.ofSeconds(10), List.of("ip", "netns", "del", ns), Map.of(), "");
                }
            }
            assertThat(cluster.lease(n)).isEqualTo(lease);
        }
    }

    /** The conflist's flannel entry as the runtime hands it over (name and cniVersion of the list). */
    private static String flannelConf(HostSideCni cni) throws Exception {
        var list = JSON.readTree(cni.conflist().toFile());
        ObjectNode conf = list.path("plugins").get(0).deepCopy();
        conf.put("cniVersion", list.path("cniVersion").asText()).put("name", list.path("name").asText());
        return conf.toString();
    }

    /** flanneld_cni_requests_total by outcome, from the node's /metrics. */
    static Map<String, Double> requests(DaemonSetCluster cluster, DaemonSetCluster.Node n) throws Exception {
        DaemonSetCluster.Probe p = cluster.probe(n, "/metrics");
        assertThat(p.status()).isEqualTo(200);
        Map<String, Double> out = new java.util.HashMap<>();
        Matcher mt = SERVED.matcher(p.body());
        while (mt.find()) {
            out.put(mt.group(1), Double.parseDouble(mt.group(2)));
        }
        assertThat(out).containsKeys("served", "fallback", "refused");
        return out;
    }
}
