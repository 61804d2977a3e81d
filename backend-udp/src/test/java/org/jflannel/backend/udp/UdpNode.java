package org.jflannel.backend.udp;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.Inet4Address;
import org.jflannel.core.ExternalInterface;
import org.jflannel.core.Ip4Net;
import org.jflannel.core.NetConf;
import org.jflannel.testsupport.netns.NodeNamespace;
import org.jflannel.testsupport.backend.FakeSubnets;

/**
 * A throwaway node namespace for the integration tests: unique name, a UdpNetwork registered
 * inside it, iproute2 as the independent witness. {@link #close()} closes the network and deletes
 * the namespace, also after a failure.
 */
final class UdpNode extends NodeNamespace {
    static final String CONF = "{\"Network\":\"10.244.0.0/16\",\"Backend\":{\"Type\":\"udp\"}}";

    UdpNetwork network;
    FakeSubnets subnets;

    private UdpNode(String prefix) throws Exception {
        super(prefix);
    }

    /** A namespace whose name starts with {@code prefix} (≤ 6 chars), lo up. */
    static UdpNode create(String prefix) throws Exception {
        return new UdpNode(prefix);
    }

    /** Registers a UDP network with lease {@code subnet}, the underlay being {@code dev} with address {@code addr}. */
    UdpNetwork register(String subnet, String dev, String addr) throws Exception {
        return register(subnet, dev, addr, true);
    }

    UdpNetwork register(String subnet, String dev, String addr, boolean offload) throws Exception {
        return register(subnet, dev, addr, offload ? UdpOptions.defaults() : new UdpOptions(false, true, false, 1));
    }

    UdpNetwork register(String subnet, String dev, String addr, UdpOptions options) throws Exception {
        NetConf conf = NetConf.parse(CONF, NetConf.Mode.KUBE);
        subnets = new FakeSubnets(conf, Ip4Net.parse(subnet), null);
        JsonNode l = ipJson("link", "show", "dev", dev).get(0);
        Inet4Address a = Ip4Net.toInet(Ip4Net.parseAddress(addr));
        ExternalInterface ext = new ExternalInterface(dev, l.get("ifindex").asInt(), l.get("mtu").asInt(), a, null, null, null);
        network = inside(() -> new UdpBackend(ext, options).register(conf, subnets));
        attach(network);
        return network;
    }


}
