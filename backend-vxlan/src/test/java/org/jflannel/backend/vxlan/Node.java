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
import org.jflannel.testsupport.netns.NodeNamespace;
import org.jflannel.testsupport.backend.FakeSubnets;

/**
 * A throwaway node namespace for the integration tests: unique name, an underlay (a veth end with
 * an address), a lease-events thread that runs inside the namespace, iproute2 as the witness.
 * {@link #close()} deletes everything, also after a failure.
 */
final class Node extends NodeNamespace {
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
