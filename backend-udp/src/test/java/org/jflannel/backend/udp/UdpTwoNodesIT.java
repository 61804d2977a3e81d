package org.jflannel.backend.udp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.jflannel.backend.udp.UdpCounters.Drop;
import org.jflannel.core.LeaseEvent;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import java.util.stream.Stream;
import org.jflannel.testsupport.cluster.Wait;
import org.jflannel.testsupport.netns.PacketCapture;

/**
 * Two node namespaces joined by a veth underlay, a UdpNetwork in each: flannel0 comes up as
 * REFERENCE §7 says, a pod address on one node answers ping from the other through the UDP
 * socket, a removed peer turns into ICMP net-unreachable, and close takes flannel0 away.
 */
@Tag("netns")
class UdpTwoNodesIT {

    /** Every fast-path switch on and off: each combination must carry the same traffic. */
    static Stream<UdpOptions> options() {
        return Stream.of(
                new UdpOptions(true, true, true, 2),    // all on, multi-queue
                new UdpOptions(true, true, true, 1),    // all on, one queue
                new UdpOptions(true, true, true, 2, false, true, UdpKernelMode.OFF, GpePath.DEFAULT_PORT), // all on, inner checksums verified before merging
                new UdpOptions(true, false, true, 2),   // no GRO: recvmmsg slots, still coalesced
                new UdpOptions(true, true, false, 1),   // GRO trains written segment by segment
                new UdpOptions(true, true, true, 1, true, false, UdpKernelMode.OFF, GpePath.DEFAULT_PORT), // sends handed to a sender thread (comparison only)
                new UdpOptions(false, false, false, 1)); // upstream's plain path
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("options")
    void flannel0CarriesPingAndTcpBetweenNodesAndGoesAwayOnClose(UdpOptions options) throws Exception {
        boolean offload = options.offload();
        try (UdpNode a = UdpNode.create("uda"); UdpNode b = UdpNode.create("udb")) {
            join(a, b);

            UdpNetwork na = a.register("10.244.1.0/24", "ul0", "192.0.2.1", options);
            UdpNetwork nb = b.register("10.244.2.0/24", "ul0", "192.0.2.2", options);
            assertFlannel0(a, na, "10.244.1.0", "192.0.2.1");
            JsonNode tunInfo = a.link("flannel0").get("linkinfo").get("info_data");
            assertThat(tunInfo.get("vnet_hdr").asBoolean()).isEqualTo(offload);
            assertThat(tunInfo.get("multi_queue").asBoolean()).isEqualTo(options.queues() > 1);
            assertThat(a.subnets.published().publicIp().getHostAddress()).isEqualTo("192.0.2.1");
            assertThat(a.subnets.published().backendType()).isEmpty();
            assertThat(a.subnets.published().backendData()).isNull();

            a.apply(LeaseEvent.added(Leases.udp("10.244.2.0/24", "192.0.2.2")));
            b.apply(LeaseEvent.added(Leases.udp("10.244.1.0/24", "192.0.2.1")));
            // a datagram that is no IP packet, from a known peer: counted and dropped, forwarding goes on
            b.inside(() -> {
                try (DatagramSocket s = new DatagramSocket()) {
                    s.send(new DatagramPacket(new byte[] {1, 2, 3}, 3, new InetSocketAddress("192.0.2.1", 8285)));
                }
                return null;
            });

            assertThat(a.exec("ping", "-c", "3", "-W", "2", "-I", "10.244.1.1", "10.244.2.1")).contains("3 received");
            assertThat(a.exec("ping", "-c", "2", "-W", "2", "10.244.2.0")).as("from flannel0's own address").contains("2 received");
            // the packet threads count after delivering, and the malformed datagram may sit on another queue's
            // socket: the last reply can reach ping before its count, so wait for the counts, then assert them
            Wait.until("A's and B's packet threads counted the 5 echoes and the malformed datagram", Duration.ofSeconds(10),
                    () -> na.counters().packetsToPeers() >= 5 && na.counters().packetsFromPeers() >= 5
                            && nb.counters().packetsFromPeers() >= 5 && na.counters().drops(Drop.MALFORMED) >= 1);
            assertThat(na.counters().packetsToPeers()).isGreaterThanOrEqualTo(5);
            assertThat(na.counters().packetsFromPeers()).isGreaterThanOrEqualTo(5);
            assertThat(nb.counters().packetsFromPeers()).isGreaterThanOrEqualTo(5);
            assertThat(na.counters().drops(Drop.MALFORMED)).isEqualTo(1);
            assertTcpStreamArrivesIntact(a, b, "10.244.2.1", 16 << 20);
            assertTcpStreamArrivesIntact(b, a, "10.244.1.1", 16 << 20);
            // the switches did what they say: trains only with GRO, super-packets only with coalescing
            UdpCounters rx = na.counters();
            assertThat(rx.groTrains() > 0).as("GRO trains received").isEqualTo(options.gro());
            assertThat(rx.segmentsCoalesced() > 0).as("segments merged").isEqualTo(options.coalesce() && offload);
            assertThat(rx.tunWrites()).isLessThanOrEqualTo(rx.packetsFromPeers());

            a.apply(LeaseEvent.removed(Leases.udp("10.244.2.0/24", "192.0.2.2")));
            // CI saw this connect succeed once (stop 46, not reproduced in 200+ tries): whatever answered is captured
            StringBuilder connected = new StringBuilder();
            Throwable refused;
            try (PacketCapture capture = PacketCapture.start(a, "tcp port 80 or icmp")) {
                refused = a.inside(() -> catchThrowable(() -> {
                    try (Socket s = new Socket()) {
                        s.connect(new InetSocketAddress("10.244.2.1", 80), 10_000);
                        connected.append("connected local=").append(s.getLocalSocketAddress()).append(" remote=")
                                .append(s.getRemoteSocketAddress()).append(" thread netns=")
                                .append(Files.readSymbolicLink(Path.of("/proc/thread-self/ns/net")));
                    }
                }));
                if (refused == null) {
                    connected.append(" the JVM's main netns=").append(Files.readSymbolicLink(Path.of("/proc/self/ns/net")))
                            .append("\ncounters: icmp sent=").append(na.counters().icmpUnreachableSent())
                            .append(" no-route drops=").append(na.counters().drops(Drop.NO_ROUTE))
                            .append("\nA's routes:\n").append(a.ip("route", "show", "table", "all"))
                            .append("A's sockets:\n").append(a.exec("ss", "-tanp"))
                            .append("B's sockets:\n").append(b.exec("ss", "-tanp"))
                            .append("captured in A:\n").append(capture.stop());
                }
            }
            assertThat(refused).as("TCP connect after the peer went away; %s", connected).isNotNull()
                    .isNotInstanceOf(SocketTimeoutException.class);
            assertThat(refused.getMessage()).containsIgnoringCase("unreachable");
            assertThat(na.counters().icmpUnreachableSent()).isGreaterThanOrEqualTo(1);
            assertThat(a.execAnyExit("ping", "-c", "1", "-W", "1", "10.244.2.1")).as("no ICMP error for ICMP")
                    .contains("0 received").doesNotContain("Unreachable");

            na.close();
            nb.close();
            assertThat(a.link("flannel0")).as("flannel0 after close").isNull();
            assertThat(b.link("flannel0")).isNull();
            assertThat(a.ip("route", "show", "10.244.0.0/16")).isBlank();
        }
    }

    @Test
    void closeStopsTheReaderThreadRemovesFlannel0AndIsIdempotent() throws Exception {
        try (UdpNode a = UdpNode.create("udc")) {
            a.ip("link", "add", "ul0", "type", "veth", "peer", "name", "ul0p");
            underlay(a, "192.0.2.1");
            a.ip("link", "set", "ul0p", "up");
            UdpNetwork n = a.register("10.244.1.0/24", "ul0", "192.0.2.1");
            assertThat(n.deviceName()).isEqualTo("flannel0");
            List<String> threads = new ArrayList<>();
            Thread.getAllStackTraces().keySet().forEach(t -> threads.add(t.getName()));
            assertThat(threads).contains("udp-tun-rx-0", "udp-sock-rx-0");

            n.close();
            n.close();
            assertThat(a.link("flannel0")).isNull();
            Wait.until("udp reader threads ended", Duration.ofSeconds(10), () ->
                    Thread.getAllStackTraces().keySet().stream().noneMatch(t -> t.getName().startsWith("udp-")));
        }
    }

    /** A bulk TCP stream (many full-size packets, batched sends, batched reads) arrives whole and in order. */
    static void assertTcpStreamArrivesIntact(UdpNode from, UdpNode to, String toAddress, int bytes) throws Exception {
        UdpNode.tcpTransferCrc(from, to, toAddress, bytes);
    }

    private static void assertFlannel0(UdpNode n, UdpNetwork network, String address, String underlay) throws Exception {
        JsonNode l = n.link("flannel0");
        assertThat(l).as("flannel0 in %s", n.name()).isNotNull();
        assertThat(l.get("mtu").asInt()).isEqualTo(1500 - 28);
        assertThat(network.mtu()).isEqualTo(1500 - 28);
        assertThat(l.get("linkinfo").get("info_kind").asText()).isEqualTo("tun");
        assertThat(l.get("flags").toString()).contains("\"UP\"");
        JsonNode addrs = n.ipJson("-4", "addr", "show", "dev", "flannel0").get(0).get("addr_info");
        assertThat(addrs).hasSize(1);
        assertThat(addrs.get(0).get("local").asText()).isEqualTo(address);
        assertThat(addrs.get(0).get("prefixlen").asInt()).isEqualTo(32);
        JsonNode routes = n.ipJson("route", "show", "10.244.0.0/16");
        assertThat(routes).hasSize(1);
        assertThat(routes.get(0).get("dev").asText()).isEqualTo("flannel0");
        assertThat(routes.get(0).has("scope")).as("scope universe: not printed").isFalse();
        assertThat(n.exec("ss", "-uln")).as("socket bound to the interface address").contains(underlay + ":8285");
    }

    /**
     * A's and B's {@code ul0} as the two ends of one veth (192.0.2.1 and .2), and on each a cni0 bridge
     * holding its pod subnet's first address (10.244.1.1/24, 10.244.2.1/24).
     */
    static void join(UdpNode a, UdpNode b) throws Exception {
        a.ip("link", "add", "ul0", "type", "veth", "peer", "name", "ul0", "netns", b.name());
        underlay(a, "192.0.2.1");
        underlay(b, "192.0.2.2");
        pod(a, "10.244.1.1/24");
        pod(b, "10.244.2.1/24");
    }

    static void underlay(UdpNode n, String addr) throws Exception {
        n.ip("addr", "add", addr + "/24", "dev", "ul0");
        n.ip("link", "set", "ul0", "up");
    }

    static void pod(UdpNode n, String cidr) throws Exception {
        n.ip("link", "add", "cni0", "type", "bridge");
        n.ip("addr", "add", cidr, "dev", "cni0");
        n.ip("link", "set", "cni0", "up");
    }
}
