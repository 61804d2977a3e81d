package org.jflannel.backend.ipsec;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.jflannel.core.ExternalInterface;
import org.jflannel.core.Ip4Net;
import org.jflannel.core.NetConf;
import org.jflannel.core.peers.HealTiming;
import org.jflannel.testsupport.backend.FakeSubnets;
import org.jflannel.testsupport.netns.NodeNamespace;

/**
 * A throwaway node for the ipsec integration tests: an underlay {@code ul0} (a veth whose other end stays
 * in the namespace) with 192.0.2.1/24, charon started inside it (private /run), the backend registered
 * on this node's lease-events thread. {@link #close()} ends charon and deletes the namespace.
 */
final class IpsecNode extends NodeNamespace {
    static final String ADDR = "192.0.2.1";
    static final String PSK = "q".repeat(96);
    IpsecNetwork network;
    private String addr = ADDR;

    private IpsecNode(String prefix) throws Exception {
        super(prefix);
    }

    /** Two nodes whose {@code ul0} ends are one veth: {@code a} 192.0.2.1/24, {@code b} 192.0.2.2/24. */
    static IpsecNode[] pair() throws Exception {
        IpsecNode a = new IpsecNode("ipa");
        IpsecNode b = null;
        try {
            b = new IpsecNode("ipb");
            a.ip("link", "add", "ul0", "type", "veth", "peer", "name", "ul0", "netns", b.name());
            a.addr = "192.0.2.1";
            b.addr = "192.0.2.2";
            for (IpsecNode n : new IpsecNode[] {a, b}) {
                n.ip("addr", "add", n.addr + "/24", "dev", "ul0");
                n.ip("link", "set", "ul0", "up");
            }
            return new IpsecNode[] {a, b};
        } catch (Exception e) {
            if (b != null) {
                b.close();
            }
            a.close();
            throw e;
        }
    }

    static IpsecNode create() throws Exception {
        IpsecNode n = new IpsecNode("ips");
        try {
            n.ip("link", "add", "ul0", "type", "veth", "peer", "name", "ul0p");
            n.ip("addr", "add", ADDR + "/24", "dev", "ul0");
            n.ip("link", "set", "ul0", "up");
            n.ip("link", "set", "ul0p", "up");
        } catch (Exception e) {
            n.close();
            throw e;
        }
        return n;
    }

    static String conf(String extra) {
        return "{\"Network\":\"10.244.0.0/16\",\"Backend\":{\"Type\":\"ipsec\",\"PSK\":\"" + PSK + "\"" + extra + "}}";
    }

    IpsecNetwork register(String netConf, String subnet, Path dir) throws Exception {
        NetConf conf = NetConf.parse(netConf, NetConf.Mode.KUBE);
        FakeSubnets subnets = new FakeSubnets(conf, Ip4Net.parse(subnet), null);
        Charon.Settings cs = CharonNs.settings(ns, dir);
        IpsecSettings settings = new IpsecSettings(cs.command(), dir, cs.vici(), true, Duration.ofSeconds(30),
                new HealTiming(Duration.ZERO, Duration.ofMillis(50), Duration.ZERO, Duration.ZERO), false);
        int index = JSON.readTree(ip("-j", "link", "show", "dev", "ul0")).get(0).get("ifindex").asInt();
        Inet4Address ip = (Inet4Address) InetAddress.getByName(addr);
        ExternalInterface ext = new ExternalInterface("ul0", index, 1500, ip, null, ip, null);
        IpsecBackend backend = new IpsecBackend(ext, inNamespace(), settings);
        network = onLeaseEvents(() -> backend.register(conf, subnets));
        attach(network);
        return network;
    }

    /** {@code ip xfrm policy} lines of interest: "src dst dir tmpl-src tmpl-dst reqid"; charon's per-socket policies left out. */
    List<String> policies() throws Exception {
        String text = ip("xfrm", "policy", "list");
        List<String> out = new java.util.ArrayList<>();
        String[] blocks = text.split("(?m)^(?=src )");
        for (String b : blocks) {
            if (b.isBlank() || b.matches("(?s).*\\bsocket (in|out)\\b.*")) { // charon's bypass policies for its IKE sockets
                continue;
            }
            String sel = b.lines().findFirst().orElse("").strip();
            String dir = b.replaceAll("(?s).*\\bdir (\\w+).*", "$1");
            String tmpl = b.replaceAll("(?s).*tmpl (src \\S+ dst \\S+).*", "$1");
            String reqid = b.replaceAll("(?s).*reqid (\\d+).*", "$1");
            out.add(sel + " " + dir + " " + tmpl + " reqid " + reqid);
        }
        return out;
    }
}
