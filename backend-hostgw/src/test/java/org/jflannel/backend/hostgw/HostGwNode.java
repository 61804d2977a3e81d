package org.jflannel.backend.hostgw;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.jflannel.core.ExternalInterface;
import org.jflannel.core.Ip4Net;
import org.jflannel.core.Ip6Net;
import org.jflannel.core.NetConf;
import org.jflannel.testsupport.backend.FakeSubnets;
import org.jflannel.testsupport.netns.NodeNamespace;

/**
 * A throwaway node namespace for the host-gw integration tests: unique name, an underlay {@code ul0}
 * (a veth whose other end stays in the namespace) with 192.0.2.1/24 and 2001:db8:1::1/64, so
 * 192.0.2.0/24 and 2001:db8:1::/64 are "our L2 segment"; a lease-events thread that runs inside the
 * namespace; iproute2 as the witness. {@link #close()} deletes everything, also after a failure.
 */
final class HostGwNode extends NodeNamespace {
    static final String ADDR = "192.0.2.1";
    static final String ADDR6 = "2001:db8:1::1";
    static final String V4_CONF = "{\"Network\":\"10.244.0.0/16\",\"Backend\":{\"Type\":\"host-gw\"}}";
    static final String DUAL_CONF = "{\"Network\":\"10.244.0.0/16\",\"EnableIPv6\":true,\"IPv6Network\":\"2001:db8:42::/56\","
            + "\"Backend\":{\"Type\":\"host-gw\"}}";

    /** No periodic reconcile (tests ask for one), short debounce. */
    HostGwSettings settings = new HostGwSettings(Duration.ZERO, Duration.ofMillis(50));
    HostGwNetwork network;
    FakeSubnets subnets;

    private HostGwNode() throws Exception {
        super("hgw");
    }

    static HostGwNode create() throws Exception {
        HostGwNode n = new HostGwNode();
        try {
            n.ip("link", "add", "ul0", "type", "veth", "peer", "name", "ul0p");
            n.ip("addr", "add", ADDR + "/24", "dev", "ul0");
            n.ip("addr", "add", ADDR6 + "/64", "dev", "ul0", "nodad");
            n.ip("link", "set", "ul0", "up");
            n.ip("link", "set", "ul0p", "up");
        } catch (Exception e) {
            n.close();
            throw e;
        }
        return n;
    }

    /**
     * Routes through {@code ul0} as iproute2 shows them, one line each:
     * {@code 10.244.2.0/24 via 192.0.2.12 boot global unicast []}; the kernel's own routes left out.
     */
    List<String> routes() throws IOException, InterruptedException {
        List<String> out = new ArrayList<>();
        for (String family : List.of("-4", "-6")) {
            String text = ip(family, "-d", "-j", "route", "show", "dev", "ul0").strip();
            for (JsonNode r : JSON.readTree(text.isEmpty() ? "[]" : text)) {
                if (!r.path("protocol").asText().equals("kernel")) {
                    out.add(r.get("dst").asText() + " via " + r.path("gateway").asText() + " " + r.path("protocol").asText()
                            + " " + r.path("scope").asText() + " " + r.path("type").asText() + " " + r.path("flags"));
                }
            }
        }
        return out;
    }

    int mtu() throws IOException, InterruptedException {
        return JSON.readTree(ip("-j", "link", "show", "dev", "ul0")).get(0).get("mtu").asInt();
    }

    ExternalInterface underlay() throws Exception {
        int index = JSON.readTree(ip("-j", "link", "show", "dev", "ul0")).get(0).get("ifindex").asInt();
        return new ExternalInterface("ul0", index, mtu(), (Inet4Address) Leases.ip(ADDR), (Inet6Address) Leases.ip(ADDR6),
                null, null);
    }

    /** Registers a host-gw network with lease {@code subnet} (and {@code subnet6}, or null), as the daemon would. */
    HostGwNetwork register(String netConf, String subnet, String subnet6) throws Exception {
        NetConf conf = NetConf.parse(netConf, NetConf.Mode.KUBE);
        subnets = new FakeSubnets(conf, subnet == null ? null : Ip4Net.parse(subnet), subnet6 == null ? null : Ip6Net.parse(subnet6));
        HostGwBackend backend = new HostGwBackend(underlay(), inNamespace(), settings);
        network = onLeaseEvents(() -> backend.register(conf, subnets));
        attach(network);
        return network;
    }
}
