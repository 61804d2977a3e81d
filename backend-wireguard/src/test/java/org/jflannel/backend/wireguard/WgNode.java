package org.jflannel.backend.wireguard;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.util.List;
import java.util.Map;
import org.jflannel.backend.wireguard.protocol.Timings;
import org.jflannel.core.ExternalInterface;
import org.jflannel.core.Ip4Net;
import org.jflannel.core.Ip6Net;
import org.jflannel.core.NetConf;
import org.jflannel.testsupport.backend.FakeSubnets;
import org.jflannel.testsupport.netns.NodeNamespace;

/**
 * A throwaway node namespace for the wireguard integration tests: unique name, lo up, optionally our
 * WireguardNetwork registered inside it; commands bounded in time. {@link #close()} closes the
 * network and deletes the namespace, also after a failure.
 */
final class WgNode extends NodeNamespace {
    WireguardNetwork network;
    FakeSubnets subnets;

    private WgNode(String prefix) throws Exception {
        super(prefix);
    }

    static WgNode create(String prefix) throws Exception {
        return new WgNode(prefix);
    }

    WireguardNetwork register(String conf, String subnet, String dev, String addr, int mtu, Map<String, String> env,
            Timings timings) throws Exception {
        NetConf c = NetConf.parse(conf, NetConf.Mode.KUBE);
        subnets = new FakeSubnets(c, Ip4Net.parse(subnet), null);
        int index = Integer.parseInt(exec("cat", "/sys/class/net/" + dev + "/ifindex").strip());
        ExternalInterface ext = new ExternalInterface(dev, index, mtu, Ip4Net.toInet(Ip4Net.parseAddress(addr)), null, null, null);
        network = inside(() -> new WireguardBackend(ext, env, timings).register(c, subnets));
        attach(network);
        return network;
    }

    /**
     * Our network over the dual-stack interface {@code dev} ({@code addr}, {@code addr6}), leasing
     * {@code subnet} and {@code subnet6} (either may be null for a family the conf leaves off).
     */
    WireguardNetwork register(String conf, String subnet, String subnet6, String dev, String addr, String addr6, int mtu,
            Map<String, String> env) throws Exception {
        NetConf c = NetConf.parse(conf, NetConf.Mode.KUBE);
        subnets = new FakeSubnets(c, subnet == null ? null : Ip4Net.parse(subnet), subnet6 == null ? null : Ip6Net.parse(subnet6));
        int index = Integer.parseInt(exec("cat", "/sys/class/net/" + dev + "/ifindex").strip());
        ExternalInterface ext = new ExternalInterface(dev, index, mtu, addr == null ? null : Ip4Net.toInet(Ip4Net.parseAddress(addr)),
                addr6 == null ? null : (Inet6Address) InetAddress.getByName(addr6), null, null);
        network = inside(() -> new WireguardBackend(ext, env, Timings.standard()).register(c, subnets));
        attach(network);
        return network;
    }

    /**
     * veth ul0 between a and b with {@code 192.0.2.1/.2} (or {@code v4Underlay}.1/.2) and
     * {@code 2001:db8::1/2} (nodad: usable at once), and a bridge {@code pod0} with each node's "pod"
     * addresses of both families.
     */
    static void joinDualStack(WgNode a, WgNode b, String v4Underlay, String[] podsA, String[] podsB) throws Exception {
        a.ip("link", "add", "ul0", "type", "veth", "peer", "name", "ul0", "netns", b.name());
        int i = 1;
        for (var n : List.of(new Object[] {a, podsA}, new Object[] {b, podsB})) {
            WgNode node = (WgNode) n[0];
            node.ip("addr", "add", v4Underlay + "." + i + "/24", "dev", "ul0");
            node.ip("-6", "addr", "add", "2001:db8::" + i + "/64", "dev", "ul0", "nodad");
            node.ip("link", "set", "ul0", "up");
            node.ip("link", "add", "pod0", "type", "bridge"); // no dummy module on every kernel
            for (String pod : (String[]) n[1]) {
                if (pod.contains(":")) {
                    node.ip("addr", "add", pod, "dev", "pod0", "nodad");
                } else {
                    node.ip("addr", "add", pod, "dev", "pod0");
                }
            }
            node.ip("link", "set", "pod0", "up");
            i++;
        }
    }

    /** veth ul0 between a and b (192.0.2.1/.2), and a bridge cni0 with the "pod" address in each. */
    static void join(WgNode a, WgNode b, String podA, String podB) throws Exception {
        a.ip("link", "add", "ul0", "type", "veth", "peer", "name", "ul0", "netns", b.name());
        for (var n : List.of(new Object[] {a, "192.0.2.1", podA}, new Object[] {b, "192.0.2.2", podB})) {
            WgNode node = (WgNode) n[0];
            node.ip("addr", "add", n[1] + "/24", "dev", "ul0");
            node.ip("link", "set", "ul0", "up");
            node.ip("link", "add", "cni0", "type", "bridge");
            node.ip("addr", "add", (String) n[2], "dev", "cni0");
            node.ip("link", "set", "cni0", "up");
        }
    }
}
