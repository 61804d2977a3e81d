package org.jflannel.netpol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.jflannel.netpol.NftScriptIT.nft;
import static org.jflannel.netpol.NftScriptIT.run;
import static org.jflannel.netpol.NftScriptIT.sh;

import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.jflannel.linuxnet.netlink.Nflog;
import org.jflannel.linuxnet.netns.NetNs;
import org.jflannel.testsupport.netns.NetnsTest;
import org.jflannel.testsupport.netns.Reachability;

/**
 * The table's denied-packet log in the real kernel: a node namespace with a bridge and two dual-stack pods, b isolated
 * for ingress (nothing allowed), the table loaded with a {@link DenyLog}, and NFLOG's group bound in the node (as
 * flanneld binds it). A TCP connection a → b over IPv4 and one over IPv6 are dropped, and the group hands over each
 * drop with the direction's prefix and the headers, which read back as who tried whom on which port; an allowed
 * packet (b → a) is never handed over. A flood of denied UDP datagrams is all counted by the drop counter, but the
 * group receives no more than the table's limit lets through, and the lines made of it are one (one attempt).
 */
class DeniedConnectionsIT {
    private static final int GROUP = 4711;
    private static final int RATE = 20;

    @NetnsTest
    void deniedPacketsReachTheNflogGroupWithinTheLimitAndReadAsWhoTriedWhom(NetNs node, NetNs a, NetNs b) throws Exception {
        for (NetNs n : List.of(node, a, b)) {
            sh(n, "sysctl -qw net.ipv6.conf.all.accept_dad=0", "sysctl -qw net.ipv6.conf.default.accept_dad=0");
        }
        sh(node, "ip link set lo up", "ip link add cni0 type bridge", "ip link set cni0 up",
                "ip addr add 10.244.1.1/24 dev cni0", "ip addr add fd00:1::1/64 dev cni0 nodad",
                "sysctl -qw net.bridge.bridge-nf-call-iptables=1", "sysctl -qw net.bridge.bridge-nf-call-ip6tables=1");
        int i = 2;
        for (NetNs pod : List.of(a, b)) {
            String host = "v" + i + node.name().substring(Math.max(0, node.name().length() - 8));
            run("ip", "link", "add", host, "netns", node.name(), "type", "veth", "peer", "name", "eth0", "netns", pod.name());
            sh(node, "ip link set " + host + " master cni0", "ip link set " + host + " up");
            sh(pod, "ip link set lo up", "ip link set eth0 up", "ip addr add 10.244.1." + i + "/24 dev eth0",
                    "ip addr add fd00:1::" + i + "/64 dev eth0 nodad");
            i++;
        }
        PodInfo pa = Fixtures.dualPod("x", "a", "n1", "10.244.1.2", "fd00:1::2", Map.of("pod", "a"));
        PodInfo pb = Fixtures.dualPod("x", "b", "n1", "10.244.1.3", "fd00:1::3", Map.of("pod", "b"));
        ClusterState s = Fixtures.state(List.of(pa, pb), List.of(Fixtures.ingress("x", "b-closed", Fixtures.sel("pod", "b"))));
        nft(node, NftScript.replace(Compiler.compile(s, "n1"), new DenyLog(GROUP, RATE)));

        List<AutoCloseable> servers = new ArrayList<>();
        servers.addAll(Reachability.tcpListeners(b, 80));
        servers.addAll(Reachability.tcpListeners(a, 80));
        servers.add(Reachability.udpEcho(b, 81));
        try (Nflog nflog = node.call(() -> Nflog.open(GROUP, DenyLog.SNAPLEN, 200))) {
            assertThat(Reachability.tcpConnects(b, InetAddress.getByName("10.244.1.2"), 80, Duration.ofSeconds(5)))
                    .as("b to a: allowed, so never logged").isTrue();
            assertThat(Reachability.tcpConnects(a, InetAddress.getByName("10.244.1.3"), 80, Duration.ofMillis(1500))).isFalse();
            assertThat(Reachability.tcpConnects(a, InetAddress.getByName("fd00:1::3"), 80, Duration.ofMillis(1500))).isFalse();

            List<DeniedConnections.Denied> seen = new ArrayList<>();
            List<String> lines = new ArrayList<>();
            DeniedConnections log = new DeniedConnections(100, addr -> addr.equals(pa.ips().get(0)) ? "x/a" : null, System::nanoTime);
            long end = System.nanoTime() + Duration.ofSeconds(20).toNanos();
            while (seen.stream().map(d -> d.source().family()).distinct().count() < 2 && System.nanoTime() < end) {
                for (Nflog.NflogPacket p : nflog.receive()) {
                    DeniedConnections.parse(p.prefix(), p.payload()).ifPresent(seen::add);
                    log.accept(p.prefix(), p.payload()).ifPresent(lines::add);
                }
            }
            assertThat(seen).as("what the group handed over").isNotEmpty().allSatisfy(d -> {
                assertThat(d.direction()).isEqualTo(Direction.INGRESS);
                assertThat(d.protocol()).isEqualTo("tcp");
                assertThat(d.destinationPort()).isEqualTo(80);
                assertThat(List.of(pa.ips().get(0), pa.ips().get(1))).contains(d.source());
                assertThat(List.of(pb.ips().get(0), pb.ips().get(1))).contains(d.destination());
            });
            assertThat(seen).extracting(d -> d.source().family()).contains(4, 6);
            assertThat(lines).as("one line per attempt, per family")
                    .contains("network policy denied direction=ingress protocol=tcp source=10.244.1.2 source_pod=x/a "
                            + "destination=10.244.1.3 port=80")
                    .hasSize(2);

            // a flood of 400 denied datagrams: all dropped and counted, at most the limit's worth handed over
            long droppedBefore = dropped(node);
            long start = System.nanoTime();
            a.run(() -> {
                try (DatagramSocket ds = new DatagramSocket()) {
                    byte[] x = new byte[32];
                    for (int n = 0; n < 400; n++) {
                        ds.send(new DatagramPacket(x, x.length, InetAddress.getByName("10.244.1.3"), 81));
                    }
                }
            });
            int handed = 0;
            DeniedConnections flood = new DeniedConnections(100, addr -> null, System::nanoTime);
            int floodLines = 0;
            long quiet = System.nanoTime() + Duration.ofSeconds(2).toNanos();
            while (System.nanoTime() < quiet) {
                for (Nflog.NflogPacket p : nflog.receive()) {
                    Optional<DeniedConnections.Denied> d = DeniedConnections.parse(p.prefix(), p.payload());
                    if (d.isPresent() && d.get().protocol().equals("udp")) {
                        handed++;
                        floodLines += flood.accept(p.prefix(), p.payload()).isPresent() ? 1 : 0;
                    }
                }
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            assertThat(dropped(node) - droppedBefore).as("the drop counter").isGreaterThanOrEqualTo(400);
            assertThat(handed).as("datagrams handed over in %.1f s", seconds).isPositive()
                    .isLessThanOrEqualTo((int) (2 * RATE + RATE * Math.ceil(seconds)));
            assertThat(floodLines).as("lines from the flood: one attempt").isEqualTo(1);
        } finally {
            for (AutoCloseable c : servers) {
                c.close();
            }
        }
    }

    private static long dropped(NetNs node) throws Exception {
        List<String> argv = new ArrayList<>(List.of("ip", "netns", "exec", node.name()));
        argv.addAll(DropCounters.command());
        Process p = new ProcessBuilder(argv).redirectErrorStream(true).start();
        p.getOutputStream().close();
        String out = new String(p.getInputStream().readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
        assertThat(p.waitFor(30, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as("nft: %s", out).isZero();
        return DropCounters.parse(out).get(Direction.INGRESS);
    }
}
