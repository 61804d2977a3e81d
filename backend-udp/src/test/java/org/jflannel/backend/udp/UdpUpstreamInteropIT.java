package org.jflannel.backend.udp;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jflannel.core.Ip4Net;
import org.jflannel.core.LeaseAttrs;
import org.jflannel.core.LeaseEvent;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Wire compatibility with upstream's udp backend where the real upstream flanneld cannot go: node B
 * is an independent peer written with Python's socket module and a plain TUN ({@code upstream_peer.py}:
 * no virtio header, no offloads, one packet per datagram, as flannel's proxy.c). A checked TCP
 * transfer goes both ways: what we send must arrive as one whole IP packet per datagram with complete
 * checksums (B's kernel verifies them: B writes plain packets), and what B sends one by one must get
 * through our receive path.
 *
 * <p>Our daemon as shipped and with the kernel datapath on, each beside the real upstream flanneld
 * v0.20.2, are the e2e module's {@code UpstreamUdpPairIT} (the packet threads, as shipped) and {@code UpstreamUdpPairKernelDatapathIT}
 * (which replaced this class's "every switch on" and "kernel datapath, B publishes nothing" variants).
 * What stays here: ours on upstream's plain path (every switch off, one queue), which no daemon
 * test runs, and a peer that claims kernel decapsulation on an underlay made to segment and checksum
 * like a NIC without offloads ({@code ethtool -K tx off}): upstream never claims it, and the netns
 * cluster's underlay is a bridge of veths.
 */
@Tag("netns")
class UdpUpstreamInteropIT {

    static java.util.stream.Stream<Arguments> options() {
        return java.util.stream.Stream.of(
                Arguments.of(UdpOptions.plain(), false),
                // what our kernel puts on a NIC's wire: B's lease claims kernel decapsulation and B sends with UDP
                // checksum 0 as an encapsulating kernel does, so our encap program sends to it, and our underlay is made
                // to segment and checksum like a NIC without offloads (ethtool tx off)
                Arguments.of(UdpOptions.withKernel(), true));
    }

    @ParameterizedTest(name = "ours: {0}, our kernel sends to B: {1}")
    @MethodSource("options")
    void tcpBothWaysBetweenOursAndAnUpstreamStylePeer(UdpOptions options, boolean viaOurKernel) throws Exception {
        Path script = Path.of(UdpUpstreamInteropIT.class.getResource("/upstream_peer.py").toURI());
        try (UdpNode a = UdpNode.create("uia"); UdpNode b = UdpNode.create("uib")) {
            UdpTwoNodesIT.join(a, b);
            UdpNetwork na = a.register("10.244.1.0/24", "ul0", "192.0.2.1", options);
            if (viaOurKernel) {
                a.exec("ethtool", "-K", "ul0", "tx", "off");
                a.apply(LeaseEvent.added(Leases.published("10.244.2.0/24", new LeaseAttrs(
                        Ip4Net.toInet(Ip4Net.parseAddress("192.0.2.2")), null, "", UdpBackendData.KERNEL_DECAP, null))));
                assertThat(na.kernelPeers()).isEqualTo(1);
            } else {
                a.apply(LeaseEvent.added(Leases.udp("10.244.2.0/24", "192.0.2.2")));
            }

            // B claiming kernel decapsulation also sends as an encapsulating kernel does (UDP checksum 0): its answer to our
            // probe proves it to our kernel datapath; without that our kernel would send it ICMP only
            Process peer = new ProcessBuilder("ip", "netns", "exec", b.name(), "python3", script.toString(),
                    "flannel0", "192.0.2.2", "8285", "192.0.2.1", "8285", "120", viaOurKernel ? "nocheck" : "check")
                    .redirectErrorStream(true).start();
            try {
                BufferedReader out = new BufferedReader(new InputStreamReader(peer.getInputStream(), StandardCharsets.UTF_8));
                CompletableFuture<String> ready = CompletableFuture.supplyAsync(() -> readLine(out));
                assertThat(ready.get(30, TimeUnit.SECONDS)).as("upstream-style peer started").isEqualTo("ready");
                // what upstream configures (REFERENCE §7): <subnet IP>/32, MTU - 28, the route of the whole network
                b.ip("addr", "add", "10.244.2.0/32", "dev", "flannel0");
                b.ip("link", "set", "flannel0", "mtu", "1472", "up");
                b.ip("route", "add", "10.244.0.0/16", "dev", "flannel0");

                assertThat(a.exec("ping", "-c", "2", "-W", "2", "-I", "10.244.1.1", "10.244.2.1")).contains("2 received");
                if (viaOurKernel) { // B's answer to our probe's nonce, with UDP checksum 0, proves it (a pod's ping proves nothing)
                    org.jflannel.testsupport.cluster.Wait.until("B proven", org.jflannel.testsupport.cluster.Bounds.scaled(
                            java.time.Duration.ofSeconds(20)), () -> na.kernelPeerProven(Ip4Net.toInet(Ip4Net.parseAddress("192.0.2.2"))));
                }
                UdpTwoNodesIT.assertTcpStreamArrivesIntact(a, b, "10.244.2.1", 4 << 20);
                UdpTwoNodesIT.assertTcpStreamArrivesIntact(b, a, "10.244.1.1", 4 << 20);

                peer.getOutputStream().close(); // stdin closed: the peer prints its counters and exits
                CompletableFuture<String> counters = CompletableFuture.supplyAsync(() -> readLine(out));
                String line = counters.get(30, TimeUnit.SECONDS);
                assertThat(line).startsWith("counters ");
                assertThat(value(line, "foreign")).isZero();
                assertThat(value(line, "received")).as("datagrams B took from us").isGreaterThan(2800);
                assertThat(value(line, "biggest")).as("one MTU-sized packet per datagram on the wire").isLessThanOrEqualTo(1472);
                long taken = na.counters().packetsFromPeers() + na.kernelPackets()[KernelPrograms.COUNT_DECAP];
                assertThat(taken).as("packets we took from B").isGreaterThan(2800);
                if (viaOurKernel) {
                    assertThat(na.kernelPackets()[KernelPrograms.COUNT_ENCAP]).as("sent to B by our encap program").isGreaterThan(100);
                    assertThat(na.counters().packetsToPeers()).as("nothing by the packet threads").isZero();
                } else {
                    assertThat(na.kernelPackets()[KernelPrograms.COUNT_ENCAP]).as("nothing sent to B by the kernel datapath").isZero();
                }
                if (options.kernel().attached()) {
                    assertThat(na.kernelDatapath()).isTrue();
                    assertThat(na.kernelPackets()[KernelPrograms.COUNT_DECAP]).as("B's datagrams decapsulated in our kernel")
                            .isGreaterThan(2800);
                }
                assertThat(na.counters().drops(UdpCounters.Drop.MALFORMED)).isZero();
            } finally {
                peer.destroy();
                if (!peer.waitFor(10, TimeUnit.SECONDS)) {
                    peer.destroyForcibly();
                }
            }
        }
    }

    private static String readLine(BufferedReader r) {
        try {
            String line;
            while ((line = r.readLine()) != null) {
                if (line.equals("ready") || line.startsWith("counters ")) {
                    return line;
                }
            }
            return "<eof>";
        } catch (java.io.IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    private static long value(String line, String key) {
        for (String f : line.split(" ")) {
            if (f.startsWith(key + "=")) {
                return Long.parseLong(f.substring(key.length() + 1));
            }
        }
        throw new AssertionError("no " + key + " in " + line);
    }
}
