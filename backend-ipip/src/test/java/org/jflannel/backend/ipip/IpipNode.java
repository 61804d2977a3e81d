package org.jflannel.backend.ipip;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.net.Inet4Address;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.jflannel.core.ExternalInterface;
import org.jflannel.core.Ip4Net;
import org.jflannel.core.NetConf;
import org.jflannel.testsupport.backend.FakeSubnets;
import org.jflannel.testsupport.cluster.Cmd;
import org.jflannel.testsupport.netns.NodeNamespace;

/**
 * A throwaway node namespace for the ipip tests (they need a kernel with ipip: {@link IpipKernelVmIT}):
 * an underlay {@code ul0} with {@code 192.0.2.<n>/24}, either a veth whose other end stays in the namespace
 * or, through {@link #pair}, a veth to a second node; a lease-events thread inside the namespace;
 * iproute2 as the witness. {@link #close()} deletes everything, also after a failure.
 */
final class IpipNode extends NodeNamespace {
    static final String CONF = "{\"Network\":\"10.244.0.0/16\",\"Backend\":{\"Type\":\"ipip\"}}";
    static final String DIRECT_CONF = "{\"Network\":\"10.244.0.0/16\",\"Backend\":{\"Type\":\"ipip\",\"DirectRouting\":true}}";

    /** No periodic reconcile (tests ask for one), short debounce and back-off. */
    IpipSettings settings = new IpipSettings(Duration.ZERO, Duration.ofMillis(50), Duration.ofMillis(100), Duration.ofSeconds(1));
    final String addr;
    IpipNetwork network;
    FakeSubnets subnets;

    private IpipNode(int n) throws Exception {
        super("ipip");
        this.addr = "192.0.2." + n;
    }

    /** One node, {@code ul0} a veth whose peer {@code ul0p} stays inside. */
    static IpipNode create() throws Exception {
        IpipNode n = new IpipNode(1);
        try {
            n.ip("link", "add", "ul0", "type", "veth", "peer", "name", "ul0p");
            n.ip("link", "set", "ul0p", "up");
            n.underlayUp();
        } catch (Exception e) {
            n.close();
            throw e;
        }
        return n;
    }

    /** Two nodes, 192.0.2.1 and 192.0.2.2, their {@code ul0}s the two ends of one veth. */
    static IpipNode[] pair() throws Exception {
        IpipNode a = new IpipNode(1);
        IpipNode b;
        try {
            b = new IpipNode(2);
        } catch (Exception e) {
            a.close();
            throw e;
        }
        try {
            a.ip("link", "add", "ul0", "type", "veth", "peer", "name", "ul0", "netns", b.name());
            a.underlayUp();
            b.underlayUp();
        } catch (Exception e) {
            a.close();
            b.close();
            throw e;
        }
        return new IpipNode[] {a, b};
    }

    private void underlayUp() throws IOException, InterruptedException {
        ip("addr", "add", addr + "/24", "dev", "ul0");
        ip("link", "set", "ul0", "up");
    }

    ExternalInterface underlay() throws Exception {
        JsonNode l = JSON.readTree(ip("-j", "link", "show", "dev", "ul0")).get(0);
        return new ExternalInterface("ul0", l.get("ifindex").asInt(), l.get("mtu").asInt(), (Inet4Address) Leases.ip(addr), null,
                null, null);
    }

    /** Registers an ipip network with lease {@code subnet}, as the daemon would. */
    IpipNetwork register(String netConf, String subnet) throws Exception {
        NetConf conf = NetConf.parse(netConf, NetConf.Mode.KUBE);
        subnets = new FakeSubnets(conf, Ip4Net.parse(subnet), null);
        IpipBackend backend = new IpipBackend(underlay(), inNamespace(), settings);
        network = onLeaseEvents(() -> backend.register(conf, subnets));
        attach(network);
        return network;
    }

    /** {@code ip -d -j link show flannel.ipip}, the first (only) entry. */
    JsonNode device() throws IOException, InterruptedException {
        return JSON.readTree(ip("-d", "-j", "link", "show", "dev", "flannel.ipip")).get(0);
    }

    int deviceIndex() throws IOException, InterruptedException {
        return device().get("ifindex").asInt();
    }

    /** IPv4 addresses on flannel.ipip: {@code 10.244.1.0/32} (the kernel gives an ipip device an IPv6 link-local of its own). */
    List<String> deviceAddresses() throws IOException, InterruptedException {
        List<String> out = new ArrayList<>();
        for (JsonNode a : JSON.readTree(ip("-4", "-j", "addr", "show", "dev", "flannel.ipip")).get(0).path("addr_info")) {
            out.add(a.get("local").asText() + "/" + a.get("prefixlen").asInt());
        }
        return out;
    }

    /**
     * Our routes as iproute2 shows them, one line each, on {@code flannel.ipip} and {@code ul0}:
     * {@code 10.244.2.0/24 via 192.0.2.2 dev flannel.ipip boot global unicast ["onlink"]}; the kernel's own left out.
     */
    List<String> routes() throws IOException, InterruptedException {
        List<String> out = new ArrayList<>();
        for (String dev : List.of("flannel.ipip", "ul0")) {
            Cmd.Result res = Cmd.run(Duration.ofSeconds(30), List.of("ip", "-n", name(), "-4", "-d", "-j", "route", "show", "dev", dev));
            String text = res.stdout().strip();
            if (res.exitCode() != 0 || !text.startsWith("[")) {
                continue; // the device is gone
            }
            for (JsonNode r : JSON.readTree(text)) {
                if (!r.path("protocol").asText().equals("kernel")) {
                    out.add(r.get("dst").asText() + " via " + r.path("gateway").asText() + " dev " + dev + " "
                            + r.path("protocol").asText() + " " + r.path("scope").asText() + " " + r.path("type").asText()
                            + " " + r.path("flags"));
                }
            }
        }
        return out;
    }

    static String tunnelRoute(String subnet, String via) {
        return subnet + " via " + via + " dev flannel.ipip boot global unicast [\"onlink\"]";
    }

    static String directRoute(String subnet, String via) {
        return subnet + " via " + via + " dev ul0 boot global unicast [\"onlink\"]";
    }
}
