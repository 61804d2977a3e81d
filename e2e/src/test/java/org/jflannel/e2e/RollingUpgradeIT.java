package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jflannel.core.MacAddress;
import org.jflannel.testbase.NetnsPrivilege;
import org.jflannel.testsupport.cluster.ClusterOptions;
import org.jflannel.testsupport.cluster.Cmd;
import org.jflannel.testsupport.cluster.ContinuousPings;
import org.jflannel.testsupport.cluster.DaemonSetCluster;
import org.jflannel.testsupport.cluster.FlannelEntries;
import org.jflannel.testsupport.cluster.IpMonitor;
import org.jflannel.testsupport.cluster.NodeLease;
import org.jflannel.testsupport.cluster.PingMatrix;
import org.jflannel.testsupport.cluster.PingTimeline;
import org.jflannel.testsupport.cluster.Pod;
import org.jflannel.testsupport.cluster.UnpackedImage;
import org.jflannel.testsupport.cluster.UpstreamFlannel;
import org.jflannel.testsupport.cluster.Wait;
import org.jflannel.testsupport.image.ImageRootfs;
import org.jflannel.testsupport.manifests.RenderedManifests;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * A rolling upgrade from upstream flannel to jflannel and back, under traffic, in kube mode (vxlan,
 * what both manifests default to). Three fake hosts run upstream's own kube-flannel.yml v0.20.2,
 * unchanged, from upstream's image as far as its pod spec reads it ({@code $JFLANNEL_UPSTREAM_DIR/flanneld}
 * at {@code /opt/bin/flanneld}, the Go plugin at {@code /flannel}; its {@code cp} init containers run as
 * written). Pods are attached once, through upstream's plugin, and ping every other pod continuously
 * (one {@code ping -D} per ordered pair, 5 a second). Then, node by node, the flannel pod is replaced
 * as a DaemonSet rolling update does (old pod stopped, new pod's init containers, new daemon) by ours
 * from {@code manifests/} and our image, then node by node back to upstream's. After every step:
 * the node's lease (podCIDR, subnet.env) and every pod's address are the ones of the start; the node's
 * VTEP keeps its MAC, which its Node annotation publishes and every peer's neighbour and FDB entries
 * point at; the node has every peer's entries; its iptables hold one flannel rule set; the full pod
 * matrix answers. At the end: no pair's longest run without a reply exceeded {@link #MAX_GAP} (a
 * bound against "lost for good", not a benchmark; the measured gaps per step are printed, see
 * docs/benchmarks.md, "Rolling upgrade"), and {@code ip monitor} on every node saw nothing on
 * {@code flannel.1} deleted, so neither daemon removed the other's entries, even for a moment.
 */
@Tag("e2e")
class RollingUpgradeIT {
    private static final int NODES = 3;
    private static final int PODS_PER_NODE = 2;
    private static final String PREFIX = "flannel.alpha.coreos.com/";
    /** net-conf.json's Network in both manifests (upstream's v0.20.2 and ours). */
    private static final String NETWORK = "10.244.0.0/16";
    private static final String VTEP = "flannel.1";
    private static final Duration INTERVAL = Duration.ofMillis(200);
    /** Each ping stops by itself after this, whatever happens to the test. */
    private static final Duration PINGS_AT_MOST = Duration.ofMinutes(8);
    private static final Duration MAX_GAP = Duration.ofSeconds(10);
    private static final Duration HANDOVER_WITHIN = Duration.ofSeconds(60);
    private static final ObjectMapper JSON = new ObjectMapper();

    private static Path work;
    private static UnpackedImage ours;
    private static UnpackedImage upstream;
    private static RenderedManifests upstreamManifests;
    private static RenderedManifests ourManifests;

    /** One node's swap: which way, when it began (old pod stopped), how long until the new pod was ready. */
    private record Step(String direction, String node, Instant began, Duration ready) {
    }

    @BeforeAll
    static void imagesAndManifests() throws Exception {
        NetnsPrivilege.require();
        Path root = ClusterOptions.findProjectRoot();
        Path flanneld = UpstreamFlannel.flanneld();
        Path plugin = UpstreamFlannel.plugin();
        work = Files.createTempDirectory("jflannel-rolling");
        ours = UnpackedImage.unpack(UnpackedImage.archive(), work.resolve("image"));
        // upstream's image as its pod spec reads it: /opt/bin/flanneld and /flannel (and cp, iptables, a libc
        // for the dynamically linked flanneld, from the base underneath)
        Path layer = Files.createDirectories(work.resolve("upstream-layer"));
        Files.createDirectories(layer.resolve("opt/bin"));
        Files.copy(flanneld, layer.resolve("opt/bin/flanneld"), StandardCopyOption.COPY_ATTRIBUTES);
        Files.copy(plugin, layer.resolve("flannel"), StandardCopyOption.COPY_ATTRIBUTES);
        upstream = ours.withLayer(layer);
        Path file = UpstreamFlannel.dataDir(root).resolve("kube-flannel-v0.20.2.yml");
        upstreamManifests = RenderedManifests.parse(file, Files.readString(file, StandardCharsets.UTF_8));
        ourManifests = RenderedManifests.render(root.resolve("manifests"));
    }

    @AfterAll
    static void remove() throws Exception {
        if (work != null) {
            ImageRootfs.delete(work);
        }
    }

    @Test
    void upstreamToOursNodeByNodeAndBackKeepsEveryPodReachableAndItsAddress() throws Exception {
        try (DaemonSetCluster cluster = DaemonSetCluster.start(upstreamManifests, upstream, work, NODES, PODS_PER_NODE,
                l -> System.out.println("rolling: " + l))) {
            Map<String, String> addresses = new LinkedHashMap<>();
            for (Pod p : cluster.pods()) {
                addresses.put(p.name(), cluster.podAddress(p));
            }
            Map<String, NodeLease> leases = new LinkedHashMap<>();
            for (DaemonSetCluster.Node n : cluster.nodes()) {
                leases.put(n.name(), cluster.lease(n));
                assertThat(daemonIs(n)).as("%s runs upstream's flanneld", n.name()).isEqualTo("flanneld");
            }
            for (DaemonSetCluster.Node n : cluster.nodes()) {
                awaitHandover(cluster, n);
            }
            fullMatrix(cluster, "upstream v0.20.2 on every node");

            List<Step> steps = new ArrayList<>();
            List<PingTimeline> timelines;
            List<IpMonitor.Event> kernel;
            Map<String, String> namespaces = new LinkedHashMap<>();
            cluster.nodes().forEach(n -> namespaces.put(n.name(), n.namespace()));
            Path logs = work.resolve("traffic-" + cluster.runId());
            try (IpMonitor monitor = IpMonitor.start(namespaces, logs, PINGS_AT_MOST);
                 ContinuousPings pings = ContinuousPings.start(cluster.pods(), logs, INTERVAL, PINGS_AT_MOST)) {
                monitor.awaitListening(HANDOVER_WITHIN);
                for (int i = 1; i <= NODES; i++) {
                    steps.add(roll(cluster, i, "upstream -> ours", ourManifests, ours, "java", leases, addresses));
                    if (i == 1) {
                        shareCdsArchive(cluster);
                    }
                }
                for (int i = 1; i <= NODES; i++) {
                    steps.add(roll(cluster, i, "ours -> upstream", upstreamManifests, upstream, "flanneld", leases, addresses));
                }
                timelines = pings.stop();
                kernel = monitor.stop();
            }
            report(steps, timelines, kernel);
            for (DaemonSetCluster.Node n : cluster.nodes()) {
                assertThat(n.daemon().logText()).as("upstream's log on %s", n.name())
                        .doesNotContain("Failed to watch").doesNotContain("failed to list");
            }
        }
    }

    /** One node's swap to {@code next}, then the checks every step must pass. */
    private static Step roll(DaemonSetCluster cluster, int i, String direction, RenderedManifests next, UnpackedImage image,
                             String expectedDaemon, Map<String, NodeLease> leases, Map<String, String> addresses)
            throws Exception {
        DaemonSetCluster.Node old = cluster.node(i);
        String what = direction + " on " + old.name();
        MacAddress macBefore = linkMac(cluster, old);
        Instant began = Instant.now();
        DaemonSetCluster.Node n = cluster.rollPod(old, next, image, Map.of());
        Duration ready = Duration.between(began, Instant.now());
        assertThat(daemonIs(n)).as("%s: the new pod's daemon", what).isEqualTo(expectedDaemon);
        assertThat(cluster.lease(n)).as("%s: the node's lease (subnet.env)", what).isEqualTo(leases.get(n.name()));
        MacAddress macAfter = awaitHandover(cluster, n);
        for (Pod p : cluster.pods()) {
            assertThat(cluster.podAddress(p)).as("%s: the address of %s", what, p.name()).isEqualTo(addresses.get(p.name()));
        }
        assertThat(macAfter).as("%s: flannel.1 adopted with its MAC (REFERENCE §6.3), so no peer has to re-learn it", what)
                .isEqualTo(macBefore);
        oneFlannelRuleSet(n, what);
        fullMatrix(cluster, what);
        n.daemon().logText().lines().filter(l -> l.matches("^(?:[WE]\\d{4} |\\S+ (?:WARN|ERROR) ).*"))
                .forEach(l -> System.out.println("rolling: " + n.name() + " logged: " + l));
        System.out.printf("rolling: step %s: ready after %d ms, VTEP MAC %s -> %s%n", what, ready.toMillis(), macBefore,
                macAfter);
        return new Step(direction, n.name(), began, ready);
    }

    /**
     * The node's iptables (whichever of nft and legacy the image's wrapper chose) hold one flannel rule
     * set, not two: one jump into FLANNEL-POSTRTG and one into FLANNEL-FWD, no rule twice, and pod to
     * pod traffic left unmasqueraded. Both implementations use upstream's chain names; each rebuilds its
     * rules in place at start (ours: delete and re-append what exists; upstream v0.20.2: the chain
     * declared, so flushed, in its iptables-restore).
     */
    private static void oneFlannelRuleSet(DaemonSetCluster.Node n, String what) throws Exception {
        List<String> rules = new ArrayList<>();
        for (String save : List.of("iptables-nft-save", "iptables-legacy-save")) {
            Cmd.run(Duration.ofSeconds(20), List.of("ip", "netns", "exec", n.namespace(), save)).orThrow().stdout().lines()
                    .filter(l -> l.startsWith("-A ")).forEach(rules::add);
        }
        assertThat(rules).as("%s: iptables rules on %s", what, n.name())
                .doesNotHaveDuplicates()
                .containsOnlyOnce("-A POSTROUTING -m comment --comment \"flanneld masq\" -j FLANNEL-POSTRTG",
                        "-A FORWARD -m comment --comment \"flanneld forward\" -j FLANNEL-FWD",
                        "-A FLANNEL-POSTRTG -s " + NETWORK + " -d " + NETWORK + " -m comment --comment \"flanneld masq\" -j RETURN");
    }

    /**
     * Waits until node {@code n}'s VTEP MAC is the one its Node publishes (backend-data), with its
     * public IP and backend type unchanged, every peer reaches it at that MAC (neighbour, FDB, route),
     * and it reaches every peer at theirs; returns the MAC.
     */
    private static MacAddress awaitHandover(DaemonSetCluster cluster, DaemonSetCluster.Node n) throws Exception {
        MacAddress mac = Wait.until(n.name() + " publishes the MAC of its flannel.1", HANDOVER_WITHIN, () -> {
            MacAddress published = publishedMac(cluster, n);
            return published != null && published.equals(linkMac(cluster, n)) ? published : null;
        }, java.util.Objects::nonNull);
        JsonNode annotations = cluster.kubeNode(n.name()).path("metadata").path("annotations");
        assertThat(annotations.path(PREFIX + "public-ip").asText()).as("%s public-ip", n.name())
                .isEqualTo(cluster.lease(n).publicIp().getHostAddress());
        assertThat(annotations.path(PREFIX + "backend-type").asText()).as("%s backend-type", n.name()).isEqualTo("vxlan");
        NodeLease lease = cluster.lease(n);
        for (DaemonSetCluster.Node peer : cluster.nodes()) {
            if (peer.index() == n.index()) {
                continue;
            }
            awaitProgrammed(cluster, peer, lease, mac);
            awaitProgrammed(cluster, n, cluster.lease(peer), publishedMac(cluster, peer));
        }
        return mac;
    }

    private static void awaitProgrammed(DaemonSetCluster cluster, DaemonSetCluster.Node on, NodeLease peer, MacAddress mac)
            throws Exception {
        Wait.until(on.name() + " reaches " + peer.node() + " at " + mac, HANDOVER_WITHIN, () -> cluster.entries(on),
                (FlannelEntries e) -> e.neighbour(peer.subnetAddress()).map(x -> mac.equals(x.mac())).orElse(false)
                        && e.fdbTo(peer.publicIp()).stream().anyMatch(f -> mac.equals(f.mac()))
                        && !e.routesTo(peer.subnet()).isEmpty());
    }

    private static MacAddress publishedMac(DaemonSetCluster cluster, DaemonSetCluster.Node n) throws Exception {
        String data = cluster.kubeNode(n.name()).path("metadata").path("annotations").path(PREFIX + "backend-data").asText("");
        return data.isEmpty() ? null : MacAddress.parse(JSON.readTree(data).path("VtepMAC").asText());
    }

    private static MacAddress linkMac(DaemonSetCluster cluster, DaemonSetCluster.Node n) throws Exception {
        FlannelEntries e = cluster.entries(n);
        return e.linkPresent() ? e.link().mac() : null;
    }

    /** The running daemon's program name ({@code /proc/PID/comm}): upstream's Go binary or our JVM. */
    private static String daemonIs(DaemonSetCluster.Node n) throws Exception {
        return Files.readString(Path.of("/proc/" + n.daemon().pid() + "/comm"), StandardCharsets.UTF_8).strip();
    }

    private static void fullMatrix(DaemonSetCluster cluster, String what) throws Exception {
        PingMatrix matrix = cluster.pingMatrix();
        assertThat(matrix.failures()).as("%s: pod pairs without an answer\n%s", what, matrix.render()).isEmpty();
    }

    /**
     * Node 1 made the daemon's class-data archive in its cds-archive init container (the dump, ~25 s
     * of one core at this machine's load, is most of an upgrade step's time here); nodes 2 and 3 get a
     * copy in their /var/lib/jflannel/cds, as if an earlier rollout of this image had made it there, so
     * their init containers (run as written) find it present. The data plane's handover is the same.
     */
    private static void shareCdsArchive(DaemonSetCluster cluster) throws Exception {
        Path made = cluster.node(1).host().path("/var/lib/jflannel/cds");
        List<Path> archives;
        try (var s = Files.list(made)) {
            archives = s.filter(p -> p.getFileName().toString().endsWith(".jsa")).toList();
        }
        assertThat(archives).as("the archive node1's cds-archive init container made in %s", made).isNotEmpty();
        for (DaemonSetCluster.Node n : cluster.nodes().subList(1, NODES)) {
            Path dir = Files.createDirectories(n.host().path("/var/lib/jflannel/cds"));
            for (Path a : archives) {
                Files.copy(a, dir.resolve(a.getFileName()), StandardCopyOption.REPLACE_EXISTING);
            }
        }
    }

    /** Prints the worst gap per step (and which pair), then checks every pair against {@link #MAX_GAP}. */
    private static void report(List<Step> steps, List<PingTimeline> timelines, List<IpMonitor.Event> kernel) {
        Instant end = timelines.get(0).stop();
        System.out.printf("rolling: %d pairs, a ping every %d ms; longest gap without a reply per step:%n", timelines.size(),
                INTERVAL.toMillis());
        System.out.println("rolling: | step | node | new pod ready after | worst gap (pair) | median of pairs' worst | events on "
                + VTEP + " |");
        List<IpMonitor.Event> onVtep = kernel.stream().filter(e -> e.concerns(VTEP)).toList();
        for (int s = 0; s < steps.size(); s++) {
            Step step = steps.get(s);
            Instant until = s + 1 < steps.size() ? steps.get(s + 1).began() : end;
            List<Map.Entry<PingTimeline, Duration>> gaps = timelines.stream()
                    .map(t -> Map.entry(t, t.longestGapDuring(step.began(), until)))
                    .sorted(Map.Entry.comparingByValue(Comparator.reverseOrder())).toList();
            Map.Entry<PingTimeline, Duration> worst = gaps.get(0);
            long events = onVtep.stream().filter(e -> !e.at().isBefore(step.began()) && e.at().isBefore(until)).count();
            System.out.printf("rolling: | %s | %s | %.1f s | %d ms (%s) | %d ms | %d |%n", step.direction(), step.node(),
                    step.ready().toMillis() / 1000.0, worst.getValue().toMillis(), worst.getKey().pair(),
                    gaps.get(gaps.size() / 2).getValue().toMillis(), events);
        }
        onVtep.forEach(e -> System.out.println("rolling: kernel event on " + VTEP + ": " + e));
        for (PingTimeline t : timelines) {
            assertThat(t.longestGap()).as("%s: longest run without a reply (%d replies)", t.pair(), t.replies().size())
                    .isLessThanOrEqualTo(MAX_GAP);
        }
        assertThat(onVtep.stream().filter(IpMonitor.Event::deletion))
                .as("entries (or the device) deleted on %s during the rollout: neither daemon removes the other's", VTEP)
                .isEmpty();
    }
}
