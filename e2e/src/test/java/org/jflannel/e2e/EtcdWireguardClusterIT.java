package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jflannel.backend.wireguard.HandshakeFlood;
import org.jflannel.linuxnet.netns.NetNs;
import org.jflannel.testsupport.cluster.Bounds;
import org.jflannel.testsupport.cluster.ClusterNames;
import org.jflannel.testsupport.cluster.ClusterNode;
import org.jflannel.testsupport.cluster.ClusterOptions;
import org.jflannel.testsupport.cluster.ClusterPerClass;
import org.jflannel.testsupport.cluster.Cmd;
import org.jflannel.testsupport.cluster.Datagrams;
import org.jflannel.testsupport.cluster.FlannelEntries;
import org.jflannel.testsupport.cluster.NetnsCluster;
import org.jflannel.testsupport.cluster.NodeLease;
import org.jflannel.testsupport.cluster.Pod;
import org.jflannel.testsupport.cluster.Wait;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The 3-node etcd cluster on the wireguard backend (userspace WireGuard on {@code flannel-wg}, each
 * node its own key file): full ping matrix, upstream's lease data, encrypted underlay, a node's key
 * rotated (file removed, restart) picked up by its peers, a removed lease leaves the peer tables. One
 * cluster for the class, in order.
 */
@Tag("e2e")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class EtcdWireguardClusterIT {
    private static final Pattern PUBLIC_KEY = Pattern.compile("\"PublicKey\":\"([A-Za-z0-9+/=]{44})\"");
    @RegisterExtension
    static final ClusterPerClass CLUSTER = ClusterPerClass.of(ClusterOptions.defaults().withBackend("wireguard"));
    private final NetnsCluster cluster;

    EtcdWireguardClusterIT(NetnsCluster cluster) {
        this.cluster = cluster;
    }

    @Test
    @Order(1)
    void everyPodReachesEveryOtherPodLeasesCarryUpstreamsBackendDataAndMetricsShowEachPeer() throws Exception {
        assertThat(cluster.pods()).hasSize(6);
        Overlay.assertEveryPodReachesEveryOther(cluster);
        for (ClusterNode n : cluster.nodes()) {
            String lease = cluster.etcdGet(NetnsCluster.leaseKey(n.lease()));
            assertThat(lease).contains("\"BackendType\":\"wireguard\"").contains("\"Port\":51820");
            assertThat(PUBLIC_KEY.matcher(lease).find()).as("PublicKey in %s", lease).isTrue();
            assertThat(Files.readString(n.dir().resolve("wgkey")).strip()).hasSize(44);
        }
        // after the matrix every node has had a handshake with every other and carried bytes both ways: /metrics says so
        for (ClusterNode n : cluster.nodes()) {
            for (ClusterNode peer : cluster.nodes()) {
                if (peer == n) {
                    continue;
                }
                String labels = "{device=\"flannel-wg\",public_key=\"" + publicKey(peer) + "\"}";
                assertThat(n.metric("flanneld_wireguard_peer_last_handshake_timestamp_seconds" + labels))
                        .as("%s's last handshake with %s", n.name(), peer.name())
                        .isBetween(System.currentTimeMillis() / 1000.0 - 600, System.currentTimeMillis() / 1000.0 + 1);
                assertThat(n.metric("flanneld_wireguard_peer_received_bytes_total" + labels)).as("%s from %s", n.name(), peer.name())
                        .isGreaterThan(148);
                assertThat(n.metric("flanneld_wireguard_peer_sent_bytes_total" + labels)).as("%s to %s", n.name(), peer.name())
                        .isGreaterThan(148);
            }
        }
    }

    @Test
    @Order(2)
    void eachNodeHasFlannelWgWithTheLeaseAddressMtuMinus80AndTheNetworkRoute() throws Exception {
        for (ClusterNode n : cluster.nodes()) {
            FlannelEntries wg = n.wireguardDevice();
            assertThat(wg.linkPresent()).as("%s flannel-wg", n.name()).isTrue();
            assertThat(wg.routesTo(cluster.options().network())).as("%s route of the network", n.name()).isNotEmpty();
            NodeLease l = n.lease();
            assertThat(l.mtu()).as("FLANNEL_MTU").isEqualTo(wg.link().mtu());
            String addr = Cmd.run(Duration.ofSeconds(10), List.of("ip", "-n", n.namespace(), "-4", "-o", "addr", "show", "dev",
                    ClusterNode.WIREGUARD_DEVICE)).orThrow().stdout();
            assertThat(addr).contains(l.subnet().split("/")[0] + "/32");
        }
    }

    @Test
    @Order(3)
    void theUnderlayCarriesNoInnerPayloadBytes() throws Exception {
        ClusterNode n1 = cluster.node(1);
        Pod from = cluster.pods().stream().filter(p -> p.node() == 1).findFirst().orElseThrow();
        Pod to = cluster.pods().stream().filter(p -> p.node() == 2).findFirst().orElseThrow();
        String pattern = "6a666c616e6e656c2d77672d73656372"; // "jflannel-wg-secr"
        Path dir = n1.dir();
        try (Capture outer = Capture.start(n1.namespace(), ClusterNames.NODE_IFACE, "udp port 51820", dir.resolve("outer.pcap"));
                Capture inner = Capture.start(n1.namespace(), ClusterNode.WIREGUARD_DEVICE, "icmp", dir.resolve("inner.pcap"))) {
            Cmd.Result ping = Cmd.run(Duration.ofSeconds(30), List.of("ip", "netns", "exec", from.namespace(), "ping", "-c", "5",
                    "-i", "0.2", "-s", "256", "-p", pattern, to.ip()));
            assertThat(ping.stdout()).contains("5 received");
            outer.stopAndFlush();
            inner.stopAndFlush();
            byte[] needle = HexFormat.of().parseHex(pattern);
            assertThat(contains(Files.readAllBytes(inner.file), needle)).as("the pattern inside flannel-wg (the witness)").isTrue();
            byte[] wire = Files.readAllBytes(outer.file);
            assertThat(wire.length).as("the underlay capture holds the 10 encrypted packets").isGreaterThan(10 * 256);
            assertThat(contains(wire, needle)).as("the pattern on the underlay").isFalse();
        }
    }

    @Test
    @Order(4)
    void aRotatedKeyIsPickedUpByThePeers() throws Exception {
        ClusterNode n3 = cluster.node(3);
        String before = publicKey(n3);
        n3.stop();
        Files.delete(n3.dir().resolve("wgkey"));
        n3.start();
        n3.awaitReady();
        String after = publicKey(n3);
        assertThat(after).as("a new key after the key file was removed").isNotEqualTo(before);
        Wait.until("every pod reaches every other under node3's new key", Duration.ofSeconds(60), () ->
                cluster.pingMatrix().failures().isEmpty());
        // a plain restart keeps the key
        n3.stop();
        n3.start();
        n3.awaitReady();
        assertThat(publicKey(n3)).isEqualTo(after);
        Wait.until("every pod reaches every other after a plain restart", Duration.ofSeconds(60), () ->
                cluster.pingMatrix().failures().isEmpty());
    }

    /**
     * Issue 40: a node restarted while a pod on another node pings one of its pods. The peer still holds a session
     * with the node's previous run and sends on it (dropped there) until its own timers initiate, 10-15 s later; the
     * restarted node initiates a handshake to every peer it learns from the leases, so the pod answers within a few
     * seconds of its subnet.env (measured into docs/benchmarks.md; the bound says "stuck", not "fast").
     */
    @Test
    @Order(5)
    void aRestartedNodeIsReachedAgainSecondsAfterItsSubnetEnvWhilePingsRun() throws Exception {
        ClusterNode restarted = cluster.node(1);
        Pod from = cluster.pods().stream().filter(p -> p.node() == 2).findFirst().orElseThrow();
        Pod to = cluster.pods().stream().filter(p -> p.node() == 1).findFirst().orElseThrow();
        Wait.until("the pods answer before the restart", Duration.ofSeconds(30), () -> cluster.ping(from, to));
        Path out = restarted.dir().resolve("restart-pings.txt");
        // -c, not -w: with a deadline iputils' ping ends at its first ICMP error (EtcdWireguardKernelRestartInVm)
        Process ping = new ProcessBuilder("ip", "netns", "exec", from.namespace(), "ping", "-n", "-D", "-i", "0.1", "-W", "1",
                "-c", "1200", to.ip()).redirectErrorStream(true).redirectOutput(out.toFile()).start();
        try {
            Wait.until("pings answered before the stop", Duration.ofSeconds(10), () -> !replies(out).isEmpty());
            restarted.stop();
            restarted.start();
            restarted.awaitReady();
            double ready = Files.getLastModifiedTime(restarted.subnetFile()).toMillis() / 1000.0;
            // 5 s: 50 times the figure measured with the restarted side initiating (0.09 s), and below the ~10-15 s the
            // peer's own timers took without it (9.9 s in a run of this test where the node initiated nothing)
            Duration bound = Bounds.scaled(Duration.ofSeconds(5));
            double answered = Wait.until("a pod on " + restarted.name() + " answers again after its restart", bound.plusSeconds(5),
                    () -> replies(out).stream().filter(t -> t > ready).findFirst().orElse(Double.NaN), t -> !t.isNaN());
            double seconds = answered - ready;
            System.out.printf("restart of %s: pods answered %.2f s after its subnet.env%n", restarted.name(), seconds);
            assertThat(seconds).as("seconds from %s's subnet.env until its pod answered", restarted.name())
                    .isLessThan(bound.toMillis() / 1000.0);
        } finally {
            ping.destroy();
            ping.waitFor(10, TimeUnit.SECONDS);
        }
        Wait.until("every pod reaches every other after the restart", Duration.ofSeconds(60), () ->
                cluster.pingMatrix().failures().isEmpty());
        // issue 40: bin/flanneld started it with C1 (etcd mode: the config is in etcd); userspace WireGuard made it
        // relaunch itself with C2, said in one line
        restarted.logSinceStart().lines().filter(l -> l.contains("JIT ") || l.contains("CLI flags config")).forEach(l -> System.out.println(restarted.name() + ": " + l));
        assertThat(restarted.logSinceStart()).contains("JIT relaunching jit=c1 wanted=c2")
                .containsPattern("JIT jit=c2 reason=\"Backend.Type=wireguard in userspace: the daemon seals every packet\" chosenBy=daemon relaunchedMs=\\d+");
    }

    private static final Pattern REPLY = Pattern.compile("^\\[(\\d+\\.\\d+)\\] \\d+ bytes from ", Pattern.MULTILINE);

    /** The epoch seconds of every echo reply {@code ping -D} logged so far. */
    private static List<Double> replies(Path out) throws java.io.IOException {
        Matcher m = REPLY.matcher(Files.readString(out, StandardCharsets.UTF_8));
        List<Double> t = new java.util.ArrayList<>();
        while (m.find()) {
            t.add(Double.parseDouble(m.group(1)));
        }
        return t;
    }

    @Test
    @Order(6)
    void aLeaseDeletedInEtcdLeavesThePeerTablesOfTheOtherNodes() throws Exception {
        // node3's own daemon stops when its lease goes (REFERENCE §5), so its traffic is not observable here;
        // that a removed peer's packets are dropped and counted is WireguardTwoNodesIT's
        NodeLease lease = cluster.node(3).lease();
        assertThat(cluster.deleteLease(lease)).isEqualTo(1);
        for (ClusterNode other : List.of(cluster.node(1), cluster.node(2))) {
            Wait.until("lease " + lease.subnet() + " gone from " + other.name() + "'s peers", Duration.ofSeconds(10),
                    () -> other.leasesApplied() == 1);
        }
    }

    /**
     * A handshake flood on node1's WireGuard port from node2's address, as an attacker who knows node1's public key
     * makes it: 300 initiations from unknown keys (node1 goes under load and answers with cookies instead of the
     * Curve25519 work), then from a sender that takes the cookie, 300 with a valid mac2 at once, of which node1's
     * daemon lets its source's rate through (20 a second, 5 at once) and drops the rest, counted in its /metrics;
     * the pods keep reaching each other.
     */
    @Test
    @Order(7)
    void aHandshakeFloodIsAnsweredWithCookiesRateLimitedAndCountedWhileThePodsTalk() throws Exception {
        ClusterNode n1 = cluster.node(1);
        ClusterNode n2 = cluster.node(2);
        byte[] responder = Base64.getDecoder().decode(publicKey(n1));
        InetSocketAddress from = new InetSocketAddress(n2.publicIp(), 0);
        InetSocketAddress to = new InetSocketAddress(n1.publicIp(), 51820);
        String limited = "flanneld_errors_total{kind=\"wireguard_rate_limited\"}";
        String refused = "flanneld_errors_total{kind=\"wireguard_bad_handshake\"}";
        double limitedBefore = Math.max(0, n1.metric(limited));
        double refusedBefore = Math.max(0, n1.metric(refused));
        try (NetNs ns = NetNs.open(n2.namespace())) {
            ns.call(() -> {
                HandshakeFlood.send(from, to, HandshakeFlood.initiations(responder, 300));
                return null;
            });
            int sent = ns.call(() -> HandshakeFlood.withCookie(from, to, responder, 300));
            Wait.until("node1 counted the cookie-carrying flood", Duration.ofSeconds(20), () ->
                    n1.metric(limited) - limitedBefore + n1.metric(refused) - refusedBefore >= sent - 10);
        }
        double dropped = n1.metric(limited) - limitedBefore;
        System.out.println("node1: rate limited " + dropped + ", refused after the work " + (n1.metric(refused) - refusedBefore));
        assertThat(dropped).as("dropped by the rate per source, of 300").isGreaterThanOrEqualTo(200);
        Pod a = cluster.pods().stream().filter(p -> p.node() == 1).findFirst().orElseThrow();
        Pod b = cluster.pods().stream().filter(p -> p.node() == 2).findFirst().orElseThrow();
        Cmd.Result ping = Cmd.run(Duration.ofSeconds(30), List.of("ip", "netns", "exec", a.namespace(), "ping", "-c", "3", "-i", "0.2",
                "-W", "2", b.ip()));
        assertThat(ping.stdout()).as("node1's pod to node2's after the flood").contains("3 received");
    }

    /**
     * Issue 38's hostile underlay, on a running pair: from an address on the segment that no lease holds, 600
     * datagrams of random bytes (random type byte, 1–200 bytes) and 200 well-formed data headers with receiver
     * indexes node1 never gave out; then real data messages node2 sent node1 (captured on the wire) replayed, from
     * the stranger and from node2's own address. node1 counts every one it got as a drop by cause (its socket's
     * overflows, if any, excepted), delivers none, logs no line per datagram, does not move node2's endpoint to the
     * stranger (no roaming on a replay), and the pods keep talking.
     */
    @Test
    @Order(8)
    void strangersGarbageAndReplayedDataAreDroppedCountedUnloggedAndMoveNoEndpoint() throws Exception {
        ClusterNode n1 = cluster.node(1);
        ClusterNode n2 = cluster.node(2);
        Pod a = cluster.pods().stream().filter(p -> p.node() == 1).findFirst().orElseThrow();
        Pod b = cluster.pods().stream().filter(p -> p.node() == 2).findFirst().orElseThrow();
        String node2 = n2.publicIp().getHostAddress();
        InetSocketAddress to = new InetSocketAddress(n1.publicIp(), 51820);
        List<byte[]> recorded;
        try (Capture c = Capture.start(n2.namespace(), ClusterNames.NODE_IFACE,
                "udp and src host " + node2 + " and dst port 51820", n2.dir().resolve("replay.pcap"))) {
            assertThat(ping(b, a, 5)).as("node2's pod to node1's, recorded").contains("5 received");
            c.stopAndFlush();
            recorded = udpPayloads(c.file).stream().filter(m -> m.length >= 32 + 256 && m[0] == 4).toList();
        }
        assertThat(recorded).as("data messages on the wire").hasSizeGreaterThanOrEqualTo(5);
        String[] kinds = {"malformed", "unknown_index", "replay", "bad_mac", "bad_auth", "bad_source", "rate_limited", "bad_handshake"};
        double[] before = dropCounts(n1, kinds);
        long rcvbufBefore = n1.udpSnmp().rcvbufErrors();
        long linesBefore = n1.logSinceStart().lines().count();
        java.util.SplittableRandom random = new java.util.SplittableRandom(38);
        List<byte[]> garbage = new java.util.ArrayList<>();
        for (int i = 0; i < 600; i++) {
            byte[] m = new byte[1 + random.nextInt(200)];
            random.nextBytes(m);
            garbage.add(m);
        }
        for (int i = 0; i < 200; i++) {
            byte[] m = new byte[32 + random.nextInt(1400)];
            random.nextBytes(m);
            m[0] = 4;
            m[1] = 0;
            m[2] = 0;
            m[3] = 0; // receiver index and counter at random: one of node1's few live indexes by chance, about 1 in 10^8
            garbage.add(m);
        }
        String stranger = "192.0.2.250";
        try (NetNs ns = NetNs.open(n2.namespace())) {
            Cmd.run(Duration.ofSeconds(10), List.of("ip", "-n", n2.namespace(), "addr", "add", stranger + "/24", "dev",
                    ClusterNames.NODE_IFACE, "nodad")).orThrow();
            try (Capture out = Capture.start(n1.namespace(), ClusterNames.NODE_IFACE,
                    "udp and dst host " + stranger + " and greater 200", n1.dir().resolve("to-stranger.pcap"))) {
                ns.call(() -> {
                    Datagrams.sendPaced(new InetSocketAddress(stranger, 0), to, garbage);
                    Datagrams.sendPaced(new InetSocketAddress(stranger, 0), to, recorded);
                    Datagrams.sendPaced(new InetSocketAddress(n2.publicIp(), 0), to, recorded);
                    return null;
                });
                int sent = garbage.size() + 2 * recorded.size();
                Wait.until("node1 counted the " + sent + " hostile datagrams", Bounds.scaled(Duration.ofSeconds(20)), () ->
                        Datagrams.sum(dropCounts(n1, kinds)) - Datagrams.sum(before) >= sent - (n1.udpSnmp().rcvbufErrors() - rcvbufBefore));
                double[] after = dropCounts(n1, kinds);
                for (int i = 0; i < kinds.length; i++) {
                    System.out.println("node1 dropped " + kinds[i] + ": " + (after[i] - before[i]));
                }
                assertThat(after[2] - before[2]).as("replays dropped by the replay window").isGreaterThanOrEqualTo(2 * recorded.size());
                assertThat(after[1] - before[1]).as("data for indexes node1 never gave out").isGreaterThanOrEqualTo(200);
                assertThat(ping(a, b, 3)).as("node1's pod to node2's after the flood").contains("3 received");
                assertThat(ping(b, a, 3)).as("node2's pod to node1's after the flood").contains("3 received");
                out.stopAndFlush();
                assertThat(udpPayloads(out.file)).as("node1's data sent to the stranger: node2's endpoint did not roam").isEmpty();
            } finally {
                Cmd.run(Duration.ofSeconds(10), List.of("ip", "-n", n2.namespace(), "addr", "del", stranger + "/24", "dev",
                        ClusterNames.NODE_IFACE));
            }
        }
        long newLines = n1.logSinceStart().lines().count() - linesBefore;
        assertThat(newLines).as("node1's log lines during %d hostile datagrams", garbage.size() + 2 * recorded.size())
                .isLessThanOrEqualTo(5);
    }

    private static String ping(Pod from, Pod to, int count) throws Exception {
        return Cmd.run(Duration.ofSeconds(30), List.of("ip", "netns", "exec", from.namespace(), "ping", "-c", String.valueOf(count),
                "-i", "0.2", "-W", "2", "-s", "256", to.ip())).stdout();
    }

    private static double[] dropCounts(ClusterNode n, String[] kinds) throws Exception {
        double[] out = new double[kinds.length];
        for (int i = 0; i < kinds.length; i++) {
            out[i] = Math.max(0, n.metric("flanneld_errors_total{kind=\"wireguard_" + kinds[i] + "\"}"));
        }
        return out;
    }



    /** The UDP payloads of IPv4 frames in a tcpdump file of an Ethernet device (link type 1). */
    private static List<byte[]> udpPayloads(Path pcap) throws Exception {
        java.nio.ByteBuffer f = java.nio.ByteBuffer.wrap(Files.readAllBytes(pcap)).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        List<byte[]> out = new java.util.ArrayList<>();
        if (f.remaining() < 24) {
            return out;
        }
        assertThat(f.getInt(0)).as("pcap magic (little-endian, microseconds)").isEqualTo(0xa1b2c3d4);
        assertThat(f.getInt(20)).as("link type Ethernet").isEqualTo(1);
        int at = 24;
        while (at + 16 <= f.limit()) {
            int len = f.getInt(at + 8);
            int frame = at + 16;
            at = frame + len;
            if (at > f.limit() || len < 14 + 20 + 8 || (f.get(frame + 12) & 0xff) != 0x08 || f.get(frame + 13) != 0) {
                continue;
            }
            int ip = frame + 14;
            int ihl = (f.get(ip) & 0x0f) * 4;
            if (f.get(ip + 9) != 17) {
                continue;
            }
            int udp = ip + ihl;
            int udpLen = ((f.get(udp + 4) & 0xff) << 8) | (f.get(udp + 5) & 0xff);
            int n = Math.min(udpLen - 8, at - (udp + 8));
            byte[] payload = new byte[Math.max(0, n)];
            f.get(udp + 8, payload);
            out.add(payload);
        }
        return out;
    }

    private String publicKey(ClusterNode n) throws Exception {
        Matcher m = PUBLIC_KEY.matcher(cluster.etcdGet(NetnsCluster.leaseKey(n.lease())));
        assertThat(m.find()).isTrue();
        return m.group(1);
    }

    private static boolean contains(byte[] hay, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= hay.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (hay[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return true;
        }
        return false;
    }

    /** tcpdump in a namespace, writing each packet as it comes (-U); ours to stop, by its own handle. */
    private static final class Capture implements AutoCloseable {
        final Path file;
        final Process process;

        private Capture(Path file, Process process) {
            this.file = file;
            this.process = process;
        }

        static Capture start(String ns, String dev, String filter, Path file) throws Exception {
            Path log = file.resolveSibling(file.getFileName() + ".log");
            Process p = new ProcessBuilder("ip", "netns", "exec", ns, "timeout", "60", "tcpdump", "-i", dev, "-n", "-U", "--immediate-mode", "-s", "0",
                    "-w", file.toString(), filter).redirectErrorStream(true).redirectOutput(log.toFile()).start();
            Capture c = new Capture(file, p);
            try {
                Wait.until("tcpdump listening on " + dev, Duration.ofSeconds(20), () -> {
                    if (!p.isAlive()) {
                        throw new Wait.Abort("tcpdump exited: " + Files.readString(log, StandardCharsets.UTF_8));
                    }
                    return Files.exists(log) && Files.readString(log, StandardCharsets.UTF_8).contains("listening on");
                });
            } catch (Exception e) {
                c.close();
                throw e;
            }
            return c;
        }

        void stopAndFlush() throws InterruptedException {
            process.destroy(); // SIGTERM to timeout, which passes it on to tcpdump: the file is complete
            process.waitFor(10, TimeUnit.SECONDS);
        }

        @Override
        public void close() throws InterruptedException {
            if (process.isAlive()) {
                process.destroyForcibly();
                process.waitFor(10, TimeUnit.SECONDS);
            }
        }
    }
}
