package org.jflannel.backend.vxlan;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.Inet4Address;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.jflannel.core.ExternalInterface;
import org.jflannel.core.Ip4Net;
import org.jflannel.core.LeaseEvent;
import org.jflannel.core.MacAddress;
import org.jflannel.core.NetConf;
import org.jflannel.linuxnet.netns.NetNs;
import org.jflannel.testsupport.netns.NetnsNames;
import org.jflannel.testbase.NetnsPrivilege;
import org.jflannel.testsupport.backend.FakeSubnets;

/**
 * A throwaway node namespace for the integration tests: unique name, an underlay (a veth end with
 * an address), a lease-events thread that runs inside the namespace, iproute2 as the witness.
 * {@link #close()} deletes everything, also after a failure.
 */
final class Node implements AutoCloseable {
    static final ObjectMapper JSON = new ObjectMapper();
    static final String CONF = "{\"Network\":\"10.244.0.0/16\",\"Backend\":{\"Type\":\"vxlan\"%s}}";

    final java.util.List<Duration> slept = new java.util.concurrent.CopyOnWriteArrayList<>();
    /** No real waiting between retries (recorded instead), no periodic reconcile, short debounce and back-off. */
    VxlanSettings settings = new VxlanSettings(slept::add, Duration.ZERO, Duration.ofMillis(50),
            Duration.ofMillis(100), Duration.ofSeconds(1));

    final NetNs ns;
    final ExecutorService leaseEvents;
    VxlanNetwork network;
    FakeSubnets subnets;

    private Node(NetNs ns) {
        this.ns = ns;
        this.leaseEvents = Executors.newSingleThreadExecutor(r -> new Thread(r, "lease-events-" + ns.name()));
    }

    /** A namespace whose name starts with {@code prefix} (≤ 6 chars), lo up. */
    static Node create(String prefix) throws Exception {
        NetnsPrivilege.require(); // under -Pintegration a missing privilege fails, never skips
        Node n = new Node(NetNs.create(NetnsNames.unique(prefix)));
        try {
            n.ip("link", "set", "lo", "up");
        } catch (Exception e) {
            n.close();
            throw e;
        }
        return n;
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

    String name() {
        return ns.name();
    }

    String ip(String... args) throws IOException, InterruptedException {
        return run(prepend(List.of("ip", "-n", name()), args));
    }

    String bridge(String... args) throws IOException, InterruptedException {
        return run(prepend(List.of("bridge", "-n", name()), args));
    }

    String exec(String... args) throws IOException, InterruptedException {
        return run(prepend(List.of("ip", "netns", "exec", name()), args));
    }

    JsonNode ipJson(String... args) throws IOException, InterruptedException {
        String out = run(prepend(List.of("ip", "-n", name(), "-j"), args)).strip();
        return JSON.readTree(out.isEmpty() ? "[]" : out);
    }

    JsonNode bridgeJson(String... args) throws IOException, InterruptedException {
        String out = run(prepend(List.of("bridge", "-n", name(), "-j"), args)).strip();
        return JSON.readTree(out.isEmpty() ? "[]" : out);
    }

    /** {@code ip -d -j link show dev <name>}, or null when the device does not exist. */
    JsonNode link(String dev) throws IOException, InterruptedException {
        try {
            return ipJson("-d", "link", "show", "dev", dev).get(0);
        } catch (IOException e) {
            return null;
        }
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
        VxlanBackend backend = new VxlanBackend(ext, storedMac, null, this::inNamespace, settings);
        network = onLeaseEvents(() -> backend.register(conf, subnets));
        return network;
    }

    /** The executor the backend gets: the lease-events thread, entering the namespace for each task. */
    private void inNamespace(Runnable task) {
        leaseEvents.execute(() -> {
            try {
                ns.run(task::run);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (Exception e) {
                throw new IllegalStateException("task failed in " + name(), e);
            }
        });
    }

    /** Registers with a full net-conf.json and both subnets (either may be null). */
    VxlanNetwork registerWith(String netConfJson, String subnet, String subnet6, ExternalInterface ext) throws Exception {
        NetConf conf = NetConf.parse(netConfJson, NetConf.Mode.KUBE);
        subnets = new FakeSubnets(conf, subnet == null ? null : Ip4Net.parse(subnet),
                subnet6 == null ? null : org.jflannel.core.Ip6Net.parse(subnet6));
        VxlanBackend backend = new VxlanBackend(ext, null, null, this::inNamespace, settings);
        network = onLeaseEvents(() -> backend.register(conf, subnets));
        return network;
    }

    /** Runs {@code work} on this node's lease-events thread (inside the namespace), like the daemon does. */
    <T> T onLeaseEvents(Callable<T> work) throws Exception {
        try {
            return leaseEvents.submit(() -> ns.call(work)).get(60, TimeUnit.SECONDS);
        } catch (java.util.concurrent.ExecutionException e) {
            if (e.getCause() instanceof Exception ex) {
                throw ex;
            }
            throw e;
        }
    }

    void apply(LeaseEvent... batch) throws Exception {
        onLeaseEvents(() -> {
            network.apply(List.of(batch));
            return null;
        });
    }

    void reconcile() throws Exception {
        onLeaseEvents(() -> {
            network.reconcile();
            return null;
        });
    }

    private static String run(List<String> cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        if (!p.waitFor(20, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IOException(String.join(" ", cmd) + ": timed out");
        }
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (p.exitValue() != 0) {
            throw new IOException(String.join(" ", cmd) + " exited " + p.exitValue() + ": " + out);
        }
        return out;
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
            leaseEvents.shutdownNow();
            leaseEvents.awaitTermination(10, TimeUnit.SECONDS);
            ns.delete();
        }
    }
}
