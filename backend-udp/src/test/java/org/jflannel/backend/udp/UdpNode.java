package org.jflannel.backend.udp;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.Inet4Address;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import org.jflannel.core.ExternalInterface;
import org.jflannel.core.Ip4Net;
import org.jflannel.core.LeaseEvent;
import org.jflannel.core.NetConf;
import org.jflannel.linuxnet.netns.NetNs;
import org.jflannel.testbase.NetnsPrivilege;
import org.jflannel.testsupport.netns.NetnsNames;
import org.jflannel.testsupport.backend.FakeSubnets;
import org.jflannel.testsupport.cluster.Cmd;

/**
 * A throwaway node namespace for the integration tests: unique name, a UdpNetwork registered
 * inside it, iproute2 as the independent witness. {@link #close()} closes the network and deletes
 * the namespace, also after a failure.
 */
final class UdpNode implements AutoCloseable {
    static final ObjectMapper JSON = new ObjectMapper();
    static final String CONF = "{\"Network\":\"10.244.0.0/16\",\"Backend\":{\"Type\":\"udp\"}}";

    final NetNs ns;
    UdpNetwork network;
    FakeSubnets subnets;

    private UdpNode(NetNs ns) {
        this.ns = ns;
    }

    /** A namespace whose name starts with {@code prefix} (≤ 6 chars), lo up. */
    static UdpNode create(String prefix) throws Exception {
        NetnsPrivilege.require(); // under -Pintegration a missing privilege fails, never skips
        UdpNode n = new UdpNode(NetNs.create(NetnsNames.unique(prefix)));
        try {
            n.ip("link", "set", "lo", "up");
        } catch (Exception e) {
            n.close();
            throw e;
        }
        return n;
    }

    String name() {
        return ns.name();
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
        return network;
    }

    void apply(LeaseEvent... batch) {
        network.apply(List.of(batch)); // touches no kernel state: any thread will do
    }

    <T> T inside(Callable<T> work) throws Exception {
        return ns.call(work);
    }

    String ip(String... args) throws IOException, InterruptedException {
        return run(prepend(List.of("ip", "-n", name()), args));
    }

    String exec(String... args) throws IOException, InterruptedException {
        return run(prepend(List.of("ip", "netns", "exec", name()), args));
    }

    /** Like {@link #exec} but returns the output whatever the exit code (ping with losses exits 1). */
    String execAnyExit(String... args) throws IOException, InterruptedException {
        return output(prepend(List.of("ip", "netns", "exec", name()), args), false);
    }

    JsonNode ipJson(String... args) throws IOException, InterruptedException {
        String out = run(prepend(List.of("ip", "-n", name(), "-j"), args)).strip();
        return JSON.readTree(out.isEmpty() ? "[]" : out);
    }

    /** {@code ip -d -j link show dev <name>}, or null when the device does not exist. */
    JsonNode link(String dev) throws IOException, InterruptedException {
        String out = output(List.of("ip", "-n", name(), "-d", "-j", "link", "show", "dev", dev), false).strip();
        if (!out.startsWith("[")) {
            return null;
        }
        JsonNode n = JSON.readTree(out);
        return n.isEmpty() ? null : n.get(0);
    }

    private static String run(List<String> cmd) throws IOException, InterruptedException {
        return output(cmd, true);
    }

    /** stdout and stderr of a command bounded in time (the harness's {@link Cmd}); with {@code requireSuccess}, exit 0 or an exception. */
    private static String output(List<String> cmd, boolean requireSuccess) throws IOException, InterruptedException {
        Cmd.Result r = Cmd.run(Duration.ofSeconds(30), cmd);
        if (requireSuccess) {
            r.orThrow();
        }
        return r.stdout() + r.stderr();
    }

    private static List<String> prepend(List<String> head, String... args) {
        List<String> all = new ArrayList<>(head);
        all.addAll(List.of(args));
        return all;
    }

    @Override
    public void close() throws Exception {
        try {
            if (network != null) {
                network.close();
            }
        } finally {
            ns.delete();
            ns.close();
        }
    }
}
