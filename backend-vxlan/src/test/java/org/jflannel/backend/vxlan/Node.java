package org.jflannel.backend.vxlan;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.net.Inet4Address;
import java.time.Duration;
import java.util.List;
import org.jflannel.core.ExternalInterface;
import org.jflannel.core.Ip4Net;
import org.jflannel.core.MacAddress;
import org.jflannel.core.NetConf;
import org.jflannel.testsupport.cluster.Wait;
import org.jflannel.testsupport.netns.NodeNamespace;
import org.jflannel.testsupport.backend.FakeSubnets;

/**
 * A throwaway node namespace for the integration tests: unique name, an underlay (a veth end with
 * an address), a lease-events thread that runs inside the namespace, iproute2 as the witness.
 * {@link #close()} deletes everything, also after a failure.
 */
final class Node extends NodeNamespace {
    /** TEST-NET-1 addresses on lo that tell when {@link #deletionsDuring} listens and when it has seen everything. */
    private static final String MARKER = "192.0.2.99";
    private static final String LAST_MARKER = "192.0.2.98";
    static final String CONF = "{\"Network\":\"10.244.0.0/16\",\"Backend\":{\"Type\":\"vxlan\"%s}}";

    final java.util.List<Duration> slept = new java.util.concurrent.CopyOnWriteArrayList<>();
    /** No real waiting between retries (recorded instead), no periodic reconcile, short debounce and back-off. */
    VxlanSettings settings = new VxlanSettings(slept::add, Duration.ZERO, Duration.ofMillis(50),
            Duration.ofMillis(100), Duration.ofSeconds(1));

    VxlanNetwork network;
    FakeSubnets subnets;

    private Node(String prefix) throws Exception {
        super(prefix);
    }

    /** A namespace whose name starts with {@code prefix} (≤ 6 chars), lo up. */
    static Node create(String prefix) throws Exception {
        return new Node(prefix);
    }

    /** A node with underlay {@code ul0} = {@code addr/24} on a veth whose other end stays in the namespace. */
    static Node withUnderlay(String prefix, String addr) throws Exception {
        Node n = create(prefix);
        try {
            n.ip("link", "add", "ul0", "type", "veth", "peer", "name", "ul0p");
            n.ip("addr", "add", addr + "/24", "dev", "ul0");
            n.ip("link", "set", "ul0", "up");
            n.ip("link", "set", "ul0p", "up");
        } catch (Exception e) {
            n.close();
            throw e;
        }
        return n;
    }

    /**
     * Runs {@code work} under {@code ip monitor all} in this namespace and returns the kernel's deletions it reported
     * meanwhile. A change made before the monitor subscribed is never reported, so a marker address on lo is added and
     * deleted until the monitor shows its deletion; a second marker added after {@code work} is the last event, so
     * everything before it is in the log once it shows.
     */
    List<String> deletionsDuring(java.util.concurrent.Callable<Void> work) throws Exception {
        java.nio.file.Path log = java.nio.file.Files.createTempFile(name() + "-monitor", ".log");
        Process monitor = new ProcessBuilder("ip", "-n", name(), "monitor", "all")
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            Wait.until("ip monitor in " + name() + " reports the marker's deletion", Duration.ofSeconds(20), () -> {
                ip("addr", "replace", MARKER + "/32", "dev", "lo");
                ip("addr", "del", MARKER + "/32", "dev", "lo");
                return monitorLines(log).anyMatch(l -> isDeletion(l) && l.contains(MARKER + "/32"));
            });
            work.call();
            ip("addr", "add", LAST_MARKER + "/32", "dev", "lo");
            Wait.until("ip monitor in " + name() + " reports the last marker", Duration.ofSeconds(20),
                    () -> monitorLines(log).anyMatch(l -> l.contains(LAST_MARKER + "/32")));
            return monitorLines(log).filter(l -> isDeletion(l) && !l.contains(MARKER + " ") && !l.contains(MARKER + "/")).toList();
        } finally {
            monitor.destroy();
            monitor.waitFor(10, java.util.concurrent.TimeUnit.SECONDS);
            java.nio.file.Files.deleteIfExists(log);
        }
    }

    private static java.util.stream.Stream<String> monitorLines(java.nio.file.Path log) throws IOException {
        return java.nio.file.Files.readString(log).lines();
    }

    /** {@code ip monitor all} prefixes each line with its kind: {@code [ROUTE]Deleted 10.100.0.0/24 ...}. */
    private static boolean isDeletion(String monitorLine) {
        return monitorLine.replaceFirst("^\\[[A-Z]+\\]", "").startsWith("Deleted");
    }

    String bridge(String... args) throws IOException, InterruptedException {
        return run(prepend(List.of("bridge", "-n", name()), args));
    }

    JsonNode bridgeJson(String... args) throws IOException, InterruptedException {
        String out = run(prepend(List.of("bridge", "-n", name(), "-j"), args)).strip();
        return JSON.readTree(out.isEmpty() ? "[]" : out);
    }

    ExternalInterface underlay(String dev, String addr) throws IOException, InterruptedException {
        JsonNode l = link(dev);
        Inet4Address a = Ip4Net.toInet(Ip4Net.parseAddress(addr));
        return new ExternalInterface(dev, l.get("ifindex").asInt(), l.get("mtu").asInt(), a, null, null, null);
    }

    /** Registers a VXLAN network with lease {@code subnet} on this node, as the daemon would. */
    VxlanNetwork register(String extraBackendJson, String subnet, ExternalInterface ext, MacAddress storedMac)
            throws Exception {
        NetConf conf = NetConf.parse(String.format(CONF, extraBackendJson), NetConf.Mode.KUBE);
        subnets = new FakeSubnets(conf, Ip4Net.parse(subnet), null);
        VxlanBackend backend = new VxlanBackend(ext, storedMac, null, inNamespace(), settings);
        network = onLeaseEvents(() -> backend.register(conf, subnets));
        attach(network);
        return network;
    }

    /** Registers with a full net-conf.json and both subnets (either may be null). */
    VxlanNetwork registerWith(String netConfJson, String subnet, String subnet6, ExternalInterface ext) throws Exception {
        NetConf conf = NetConf.parse(netConfJson, NetConf.Mode.KUBE);
        subnets = new FakeSubnets(conf, subnet == null ? null : Ip4Net.parse(subnet),
                subnet6 == null ? null : org.jflannel.core.Ip6Net.parse(subnet6));
        VxlanBackend backend = new VxlanBackend(ext, null, null, inNamespace(), settings);
        network = onLeaseEvents(() -> backend.register(conf, subnets));
        attach(network);
        return network;
    }
}
