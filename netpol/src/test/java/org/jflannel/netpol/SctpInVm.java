package org.jflannel.netpol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.jflannel.netpol.NftScriptIT.nft;
import static org.jflannel.netpol.NftScriptIT.run;
import static org.jflannel.netpol.NftScriptIT.sh;

import com.sun.nio.sctp.SctpChannel;
import com.sun.nio.sctp.SctpServerChannel;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.jflannel.linuxnet.netns.NetNs;
import org.jflannel.testsupport.netns.NetnsTest;
import org.jflannel.testsupport.netns.Reachability;

/**
 * SCTP policy in a kernel that has SCTP (run inside the kernel VM by {@link SctpPolicyVmIT}; this project's machines
 * have none): a node namespace with a bridge and three pods, each serving SCTP on 80 and 81 and TCP on 80; pod b
 * takes SCTP 80 from pod a only, pod c takes SCTP on 80-81 from anyone but TCP from nobody. The table is loaded with
 * the real nft, and every pod's SCTP association (INIT, INIT-ACK, COOKIE; the reply direction through conntrack)
 * and TCP connection to every other on each port gets through exactly when {@link Spec} says so.
 */
class SctpInVm {
    @NetnsTest
    void sctpAssociationsGetThroughExactlyWhereTheSpecAllowsThem(NetNs node, NetNs a, NetNs b, NetNs c) throws Exception {
        Map<String, NetNs> ns = new LinkedHashMap<>(Map.of("a", a, "b", b, "c", c));
        sh(node, "ip link set lo up", "ip link add cni0 type bridge", "ip link set cni0 up", "ip addr add 10.244.1.1/24 dev cni0",
                "sysctl -qw net.bridge.bridge-nf-call-iptables=1");
        Map<String, PodInfo> pods = new TreeMap<>();
        int i = 2;
        for (Map.Entry<String, NetNs> e : ns.entrySet()) {
            String host = "v" + e.getKey() + node.name().substring(Math.max(0, node.name().length() - 8));
            run("ip", "link", "add", host, "netns", node.name(), "type", "veth", "peer", "name", "eth0", "netns", e.getValue().name());
            sh(node, "ip link set " + host + " master cni0", "ip link set " + host + " up");
            sh(e.getValue(), "ip link set lo up", "ip link set eth0 up", "ip addr add 10.244.1." + i + "/24 dev eth0");
            pods.put(e.getKey(), Fixtures.pod("x", e.getKey(), "n1", "10.244.1." + i, Map.of("pod", e.getKey())));
            i++;
        }
        List<Policy> policies = List.of(
                Fixtures.ingress("x", "b-sctp-from-a", Fixtures.sel("pod", "b"),
                        Fixtures.from(List.of(PolicyPeer.pods(Fixtures.sel("pod", "a"))), PolicyPort.number(Protocol.SCTP, 80))),
                Fixtures.ingress("x", "c-sctp-only", Fixtures.sel("pod", "c"),
                        Fixtures.from(List.of(), PolicyPort.range(Protocol.SCTP, 80, 81))));
        ClusterState s = Fixtures.state(new ArrayList<>(pods.values()), policies);
        nft(node, NftScript.replace(Compiler.compile(s, "n1"), new DenyLog(4711, 10)));

        List<AutoCloseable> servers = new ArrayList<>();
        try {
            for (NetNs n : ns.values()) {
                for (int port : new int[] {80, 81}) {
                    servers.add(sctpServer(n, port));
                }
                servers.addAll(Reachability.tcpListeners(n, 80));
            }
            Map<String, Boolean> expected = new TreeMap<>();
            Map<String, Boolean> got = new TreeMap<>();
            for (String from : ns.keySet()) {
                for (String to : ns.keySet()) {
                    if (from.equals(to)) {
                        continue;
                    }
                    Endpoint src = Fixtures.at(pods.get(from));
                    Endpoint dst = Fixtures.at(pods.get(to));
                    InetAddress addr = InetAddress.getByName(pods.get(to).ips().get(0).toString());
                    for (int port : new int[] {80, 81}) {
                        String key = from + "->" + to + " sctp/" + port;
                        expected.put(key, Spec.allows(s, src, dst, Protocol.SCTP, port));
                        got.put(key, sctpConnects(ns.get(from), addr, port));
                    }
                    String key = from + "->" + to + " tcp/80";
                    expected.put(key, Spec.allows(s, src, dst, Protocol.TCP, 80));
                    got.put(key, Reachability.tcpConnects(ns.get(from), addr, 80, java.time.Duration.ofSeconds(3)));
                }
            }
            assertThat(got).as("what got through").isEqualTo(expected);
            assertThat(expected).containsEntry("a->b sctp/80", true).containsEntry("c->b sctp/80", false)
                    .containsEntry("a->b sctp/81", false).containsEntry("a->c sctp/81", true).containsEntry("a->c tcp/80", false);
        } finally {
            for (AutoCloseable x : servers) {
                x.close();
            }
        }
    }

    /** An SCTP server on {@code port} in {@code ns} that accepts associations (and closes them) until closed. */
    private static AutoCloseable sctpServer(NetNs ns, int port) throws Exception {
        SctpServerChannel server = ns.call(() -> SctpServerChannel.open().bind(new InetSocketAddress(port)));
        Thread t = new Thread(() -> {
            while (server.isOpen()) {
                try (SctpChannel ch = server.accept()) {
                    if (ch == null) {
                        return;
                    }
                } catch (IOException e) {
                    return;
                }
            }
        }, "sctp-" + ns.name() + "-" + port);
        t.setDaemon(true);
        t.start();
        return server;
    }

    /** Whether an association from {@code from} to {@code to}:{@code port} comes up within 4 s (INIT retried once). */
    private static boolean sctpConnects(NetNs from, InetAddress to, int port) throws Exception {
        try (SctpChannel ch = from.call(() -> {
            SctpChannel x = SctpChannel.open();
            x.bind(null);
            return x;
        }); Selector sel = Selector.open()) {
            ch.configureBlocking(false);
            if (ch.connect(new InetSocketAddress(to, port))) {
                return true;
            }
            ch.register(sel, SelectionKey.OP_CONNECT);
            long end = System.nanoTime() + 4_000_000_000L;
            while (System.nanoTime() < end) {
                if (sel.select(Math.max(1, (end - System.nanoTime()) / 1_000_000)) > 0) {
                    try {
                        return ch.finishConnect();
                    } catch (IOException e) {
                        return false;
                    }
                }
            }
            return false;
        }
    }
}
