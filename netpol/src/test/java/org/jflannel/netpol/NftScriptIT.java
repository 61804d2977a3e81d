package org.jflannel.netpol;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.jflannel.linuxnet.netns.NetNs;
import org.jflannel.testsupport.netns.NetnsTest;
import org.jflannel.testsupport.netns.Reachability;

/**
 * The rendered script in the real kernel: a node namespace with a bridge {@code cni0} (br_netfilter on, as
 * a Kubernetes node has it) holding three pods, and a fourth pod behind a routed link (as a pod of another
 * node arrives through flannel.1), each pod dual-stack, listening on TCP 80 and 81 and UDP 80. Policies
 * isolate some of them; {@code nft -f} loads the node's table; every pod tries every other on each port
 * in each family, and what gets through is exactly what {@link Spec} allows (replies of allowed
 * connections included, through conntrack). Then a pod's labels change: the new table, loaded over the
 * old in one transaction, gives the new truth table.
 */
class NftScriptIT {
    private static final List<Object[]> PORTS = List.of(new Object[] {Protocol.TCP, 80}, new Object[] {Protocol.TCP, 81},
            new Object[] {Protocol.UDP, 80});

    @NetnsTest
    void whatTheKernelLetsThroughIsWhatTheSpecAllowsAndALabelChangeTakesEffect(NetNs node, NetNs a, NetNs b, NetNs c, NetNs r)
            throws Exception {
        Map<String, NetNs> ns = new LinkedHashMap<>(Map.of("a", a, "b", b, "c", c, "r", r));
        for (NetNs n : List.of(node, a, b, c, r)) { // no duplicate address detection: no link-local address left tentative
            sh(n, "sysctl -qw net.ipv6.conf.all.accept_dad=0", "sysctl -qw net.ipv6.conf.default.accept_dad=0");
        }
        sh(node, "ip link set lo up", "ip link add cni0 type bridge", "ip link set cni0 up",
                "ip addr add 10.244.1.1/24 dev cni0", "ip addr add fd00:1::1/64 dev cni0 nodad",
                "sysctl -qw net.ipv4.ip_forward=1", "sysctl -qw net.ipv6.conf.all.forwarding=1",
                "sysctl -qw net.bridge.bridge-nf-call-iptables=1", "sysctl -qw net.bridge.bridge-nf-call-ip6tables=1");
        int i = 2;
        for (String p : List.of("a", "b", "c")) {
            String host = "v" + p + node.name().substring(Math.max(0, node.name().length() - 8));
            run("ip", "link", "add", host, "netns", node.name(), "type", "veth", "peer", "name", "eth0", "netns", ns.get(p).name());
            sh(node, "ip link set " + host + " master cni0", "ip link set " + host + " up");
            sh(ns.get(p), "ip link set lo up", "ip link set eth0 up", "ip addr add 10.244.1." + i + "/24 dev eth0",
                    "ip addr add fd00:1::" + i + "/64 dev eth0 nodad", "ip route add default via 10.244.1.1",
                    "ip -6 route add default via fd00:1::1");
            i++;
        }
        run("ip", "link", "add", "rt0", "netns", node.name(), "type", "veth", "peer", "name", "eth0", "netns", r.name());
        sh(node, "ip link set rt0 up", "ip addr add 10.244.2.1/24 dev rt0", "ip addr add fd00:2::1/64 dev rt0 nodad");
        sh(r, "ip link set lo up", "ip link set eth0 up", "ip addr add 10.244.2.2/24 dev eth0", "ip addr add fd00:2::2/64 dev eth0 nodad",
                "ip route add default via 10.244.2.1", "ip -6 route add default via fd00:2::1");

        PodInfo pa = pod("x", "a", "n1", "10.244.1.2", "fd00:1::2", Map.of("pod", "a"), new PodInfo.NamedPort("http", Protocol.TCP, 80));
        PodInfo pb = pod("x", "b", "n1", "10.244.1.3", "fd00:1::3", Map.of("pod", "b"));
        PodInfo pc = pod("y", "c", "n1", "10.244.1.4", "fd00:1::4", Map.of("pod", "c"));
        PodInfo pr = pod("y", "r", "n2", "10.244.2.2", "fd00:2::2", Map.of("pod", "r"));
        List<Policy> policies = List.of(
                // a takes its named port http (80) from pod=b only
                Fixtures.ingress("x", "a-from-b", Fixtures.sel("pod", "a"),
                        Fixtures.from(List.of(PolicyPeer.pods(Fixtures.sel("pod", "b"))), PolicyPort.named(Protocol.TCP, "http"))),
                // c may reach namespace x only
                Fixtures.egress("y", "c-to-x", Fixtures.sel("pod", "c"), Fixtures.from(List.of(PolicyPeer.namespaces(
                        LabelSelector.of(Map.of("kubernetes.io/metadata.name", "x")))))),
                // b takes UDP from the other node's pods but r's IPv4, and anything over IPv6 from fd00:2::/32
                Fixtures.ingress("x", "b-from-remote", Fixtures.sel("pod", "b"),
                        Fixtures.from(List.of(PolicyPeer.block(new PolicyPeer.IpBlock(Cidr.parse("cidr", "10.244.2.0/24"),
                                List.of(Cidr.parse("except", "10.244.2.2/32"))))), PolicyPort.all(Protocol.UDP)),
                        Fixtures.from(List.of(PolicyPeer.block(new PolicyPeer.IpBlock(Cidr.parse("cidr", "fd00:2::/32"), List.of()))))));
        List<PodInfo> pods = List.of(pa, pb, pc, pr);
        Map<String, PodInfo> byName = Map.of("a", pa, "b", pb, "c", pc, "r", pr);

        List<AutoCloseable> servers = new ArrayList<>();
        try {
            for (Map.Entry<String, NetNs> e : ns.entrySet()) {
                servers.addAll(listen(e.getValue()));
            }
            ClusterState before = Fixtures.state(pods, policies);
            load(node, before);
            assertMatrix(before, ns, byName);
            List<String> list = new ArrayList<>(List.of("ip", "netns", "exec", node.name()));
            list.addAll(DropCounters.command());
            Process p = new ProcessBuilder(list).redirectErrorStream(true).start();
            String counters = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
            assertThat(DropCounters.parse(counters)).as("the denied probes, counted per direction: %s", counters)
                    .allSatisfy((d, packets) -> assertThat(packets).as("%s", d).isPositive());

            PodInfo relabelled = new PodInfo("x", "b", Map.of("pod", "z"), pb.ips(), "n1", false, List.of(), false);
            ClusterState after = Fixtures.state(List.of(pa, relabelled, pc, pr), policies);
            String update = NftScript.update(Compiler.compile(before, "n1"), Compiler.compile(after, "n1"));
            // b leaves the set of pod=b (a's peers) and the policy that isolated it: a few elements and its chain
            assertThat(update).as("the update").contains("delete element inet jflannel-netpol s_").doesNotContain("add chain")
                    .doesNotContain("table");
            nft(node, update);
            assertThat(reaches(b, pa.ips().get(0), Protocol.TCP, 80)).as("b, relabelled, to a's http").isFalse();
            assertMatrix(after, ns, Map.of("a", pa, "b", relabelled, "c", pc, "r", pr));
        } finally {
            for (AutoCloseable s : servers) {
                s.close();
            }
        }
    }

    private static void assertMatrix(ClusterState s, Map<String, NetNs> ns, Map<String, PodInfo> byName) throws Exception {
        Map<String, Boolean> expected = new TreeMap<>();
        Map<String, java.util.concurrent.Future<Boolean>> probes = new TreeMap<>();
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(16);
        try {
        for (String from : ns.keySet()) {
            for (String to : ns.keySet()) {
                if (from.equals(to) || (from.equals("r") && to.equals("r"))) {
                    continue;
                }
                for (int f = 0; f < 2; f++) {
                    PodInfo src = byName.get(from);
                    PodInfo dst = byName.get(to);
                    for (Object[] pk : PORTS) {
                        Protocol proto = (Protocol) pk[0];
                        int port = (Integer) pk[1];
                        String key = from + "->" + to + " " + (f == 0 ? "v4" : "v6") + " " + proto + "/" + port;
                        expected.put(key, Spec.allows(s, Endpoint.of(src, src.ips().get(f)), Endpoint.of(dst, dst.ips().get(f)), proto, port));
                        NetNs source = ns.get(from);
                        Addr to2 = dst.ips().get(f);
                        probes.put(key, pool.submit(() -> reaches(source, to2, proto, port)));
                    }
                }
            }
        }
        } finally {
            pool.shutdown();
        }
        Map<String, Boolean> got = new TreeMap<>();
        for (Map.Entry<String, java.util.concurrent.Future<Boolean>> e : probes.entrySet()) {
            got.put(e.getKey(), e.getValue().get(30, TimeUnit.SECONDS));
        }
        assertThat(got).as("what got through").isEqualTo(expected);
        assertThat(expected).as("the case denies some and allows some").containsValue(true).containsValue(false);
    }

    /** A TCP connect (which needs the SYN-ACK back) or a UDP echo from {@code from} to {@code to}:{@code port}. */
    private static boolean reaches(NetNs from, Addr to, Protocol proto, int port) throws Exception {
        InetAddress dst = InetAddress.getByName(to.toString());
        Duration within = Duration.ofMillis(1500);
        return proto == Protocol.TCP ? Reachability.tcpConnects(from, dst, port, within) : Reachability.udpEchoes(from, dst, port, within);
    }

    /** TCP 80 and 81 (accepting and closing) and a UDP 80 echo on every address of the pod, until closed. */
    private static List<AutoCloseable> listen(NetNs ns) throws Exception {
        List<AutoCloseable> all = new ArrayList<>(Reachability.tcpListeners(ns, 80, 81));
        all.add(Reachability.udpEcho(ns, 80));
        return all;
    }

    /**
     * For random pairs of states (the property test's clusters), the table loaded whole from the first and then
     * updated to the second holds exactly what the table loaded whole from the second holds ({@code nft -j list
     * table}, set elements and objects in a fixed order, rule handles left out).
     */
    @NetnsTest
    void anUpdatedTableHoldsWhatTheTableLoadedWholeHolds(NetNs updated, NetNs whole) throws Exception {
        List<ClusterState> states = new CompilerPropertyTest().clusters().sampleStream().limit(81).toList();
        int nonEmpty = 0;
        nft(updated, NftScript.replace(Compiler.compile(states.get(0), "n1")));
        for (int i = 1; i < states.size(); i++) {
            NodeRules was = Compiler.compile(states.get(i - 1), "n1");
            NodeRules now = Compiler.compile(states.get(i), "n1");
            String update = NftScript.update(was, now);
            if (!update.isEmpty()) {
                nonEmpty++;
                nft(updated, update);
            }
            nft(whole, NftScript.replace(now));
            assertThat(listing(updated)).as("step %d, update:\n%s", i, update).isEqualTo(listing(whole));
        }
        assertThat(nonEmpty).as("updates that changed something").isGreaterThanOrEqualTo(5);
        assertThat(NftScript.update(Compiler.compile(states.get(3), "n1"), Compiler.compile(states.get(3), "n1"))).isEmpty();
    }

    /** The table as the kernel lists it, in a fixed order. */
    private static String listing(NetNs ns) throws Exception {
        Process p = new ProcessBuilder("ip", "netns", "exec", ns.name(), "nft", "-j", "list", "table", "inet", NftScript.TABLE)
                .redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor(30, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as("nft list: %s", out).isZero();
        com.fasterxml.jackson.databind.ObjectMapper json = new com.fasterxml.jackson.databind.ObjectMapper();
        List<String> objects = new ArrayList<>();
        Map<String, List<String>> rules = new TreeMap<>();
        for (com.fasterxml.jackson.databind.JsonNode o : json.readTree(out).path("nftables")) {
            if (o.has("rule")) {
                com.fasterxml.jackson.databind.node.ObjectNode r = (com.fasterxml.jackson.databind.node.ObjectNode) o.get("rule").deepCopy();
                r.remove("handle");
                rules.computeIfAbsent(r.path("chain").asText(), k -> new ArrayList<>()).add(r.toString());
            } else if (o.has("set") || o.has("map") || o.has("chain")) {
                com.fasterxml.jackson.databind.node.ObjectNode x = (com.fasterxml.jackson.databind.node.ObjectNode) o.deepCopy();
                com.fasterxml.jackson.databind.node.ObjectNode inner = (com.fasterxml.jackson.databind.node.ObjectNode) x.elements().next();
                inner.remove("handle");
                if (inner.has("elem")) {
                    List<String> elems = new ArrayList<>();
                    inner.get("elem").forEach(e -> elems.add(e.toString()));
                    java.util.Collections.sort(elems);
                    inner.putPOJO("elem", elems);
                }
                objects.add(x.toString());
            }
        }
        java.util.Collections.sort(objects);
        return String.join("\n", objects) + "\n" + rules;
    }

    private static void load(NetNs node, ClusterState s) throws Exception {
        nft(node, NftScript.replace(Compiler.compile(s, "n1")));
    }

    static void nft(NetNs node, String script) throws Exception {
        Path f = Files.createTempFile("netpol", ".nft");
        try {
            Files.writeString(f, script);
            run("ip", "netns", "exec", node.name(), "nft", "-f", f.toString());
        } catch (AssertionError e) {
            throw new AssertionError(e.getMessage() + "\nscript:\n" + script, e);
        } finally {
            Files.deleteIfExists(f);
        }
    }

    private static PodInfo pod(String nsName, String name, String node, String ip4, String ip6, Map<String, String> labels,
                               PodInfo.NamedPort... ports) {
        return new PodInfo(nsName, name, labels, List.of(Addr.parse(ip4), Addr.parse(ip6)), node, false, List.of(ports), false);
    }

    static void sh(NetNs ns, String... commands) throws Exception {
        for (String c : commands) {
            List<String> argv = new ArrayList<>(List.of("ip", "netns", "exec", ns.name()));
            argv.addAll(List.of(c.split(" ")));
            run(argv.toArray(String[]::new));
        }
    }

    static void run(String... argv) throws Exception {
        Process p = new ProcessBuilder(argv).redirectErrorStream(true).start();
        p.getOutputStream().close();
        if (!p.waitFor(Duration.ofSeconds(30).toSeconds(), TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError(String.join(" ", argv) + ": no exit within 30 s");
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (p.exitValue() != 0) {
            throw new AssertionError(String.join(" ", argv) + ": exit " + p.exitValue() + ": " + out);
        }
    }
}
