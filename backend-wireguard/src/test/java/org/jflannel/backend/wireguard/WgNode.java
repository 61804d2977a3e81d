package org.jflannel.backend.wireguard;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32;
import org.jflannel.backend.wireguard.protocol.Timings;
import org.jflannel.core.ExternalInterface;
import org.jflannel.core.Ip4Net;
import org.jflannel.core.NetConf;
import org.jflannel.linuxnet.netns.NetNs;
import org.jflannel.testbase.NetnsPrivilege;
import org.jflannel.testsupport.backend.FakeSubnets;
import org.jflannel.testsupport.cluster.Cmd;
import org.jflannel.testsupport.netns.NetnsNames;

/**
 * A throwaway node namespace for the wireguard integration tests: unique name, lo up, optionally our
 * WireguardNetwork registered inside it; commands bounded in time. {@link #close()} closes the
 * network and deletes the namespace, also after a failure.
 */
final class WgNode implements AutoCloseable {
    final NetNs ns;
    WireguardNetwork network;
    FakeSubnets subnets;

    private WgNode(NetNs ns) {
        this.ns = ns;
    }

    static WgNode create(String prefix) throws Exception {
        NetnsPrivilege.require();
        WgNode n = new WgNode(NetNs.create(NetnsNames.unique(prefix)));
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

    WireguardNetwork register(String conf, String subnet, String dev, String addr, int mtu, Map<String, String> env,
            Timings timings) throws Exception {
        NetConf c = NetConf.parse(conf, NetConf.Mode.KUBE);
        subnets = new FakeSubnets(c, Ip4Net.parse(subnet), null);
        int index = Integer.parseInt(exec("cat", "/sys/class/net/" + dev + "/ifindex").strip());
        ExternalInterface ext = new ExternalInterface(dev, index, mtu, Ip4Net.toInet(Ip4Net.parseAddress(addr)), null, null, null);
        network = ns.call(() -> new WireguardBackend(ext, env, timings).register(c, subnets));
        return network;
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

    String execAnyExit(String... args) throws IOException, InterruptedException {
        Cmd.Result r = Cmd.run(Duration.ofSeconds(30), prepend(List.of("ip", "netns", "exec", name()), args));
        return r.stdout() + r.stderr();
    }

    static String run(List<String> cmd) throws IOException, InterruptedException {
        Cmd.Result r = Cmd.run(Duration.ofSeconds(30), cmd);
        r.orThrow();
        return r.stdout() + r.stderr();
    }

    static List<String> prepend(List<String> head, String... args) {
        List<String> all = new ArrayList<>(head);
        all.addAll(List.of(args));
        return all;
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

    /** A {@code bytes}-long random stream from {@code from} to {@code toAddress}:5001 in {@code to}; returns when the CRCs match. */
    static long tcpTransferCrc(WgNode from, WgNode to, String toAddress, int bytes) throws Exception {
        CompletableFuture<Long> received = new CompletableFuture<>();
        CountDownLatch listening = new CountDownLatch(1);
        Thread server = new Thread(() -> {
            try {
                received.complete(to.inside(() -> {
                    try (ServerSocket ss = new ServerSocket()) {
                        ss.setSoTimeout(30_000);
                        ss.bind(new InetSocketAddress(toAddress, 5001));
                        listening.countDown();
                        try (Socket s = ss.accept()) {
                            s.setSoTimeout(30_000);
                            return crc(s.getInputStream());
                        }
                    }
                }));
            } catch (Exception e) {
                received.completeExceptionally(e);
            }
        }, "tcp-sink");
        server.start();
        if (!listening.await(30, TimeUnit.SECONDS)) {
            throw new IllegalStateException("sink not listening");
        }
        long sent = from.inside(() -> {
            CRC32 crc = new CRC32();
            Random random = new Random(42);
            byte[] chunk = new byte[64 << 10];
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress(toAddress, 5001), 10_000);
                for (int done = 0; done < bytes; done += chunk.length) {
                    random.nextBytes(chunk);
                    crc.update(chunk);
                    s.getOutputStream().write(chunk);
                }
            }
            return crc.getValue();
        });
        long got = received.get(90, TimeUnit.SECONDS);
        server.join(10_000);
        if (got != sent) {
            throw new AssertionError("CRC32 of the received stream " + Long.toHexString(got) + " != sent " + Long.toHexString(sent));
        }
        return got;
    }

    private static long crc(InputStream in) throws IOException {
        CRC32 crc = new CRC32();
        byte[] buf = new byte[64 << 10];
        int n;
        while ((n = in.read(buf)) > 0) {
            crc.update(buf, 0, n);
        }
        return crc.getValue();
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
