package org.jflannel.backend.udp;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.net.Inet4Address;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jflannel.core.Ip4Net;
import org.jflannel.core.LeaseAttrs;
import org.jflannel.core.LeaseEvent;
import org.jflannel.testsupport.cluster.Bounds;
import org.jflannel.testsupport.cluster.Wait;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * The kernel datapath's proof of a peer against a hostile underlay (issue 38): three namespaces on one bridge, nodes A
 * and B and a host S that forges datagrams with B's public IP as their source (a raw socket, {@code spoof_peer.py}):
 * answers to the probe with guessed nonces and TCP segments, with UDP checksum 0 and checksummed, at a bounded rate.
 * A's proof of B, read from the kernel's map, never changes, A's traffic to B keeps its path (the counters), and no
 * line is logged per forgery; the proofs that only the real peer can give still work: two of ours prove each other,
 * and a peer restarted as an upstream-style node (its daemon answers) is unproven, whether it sends TCP first or not.
 */
@Tag("netns")
class UdpKernelProofIT {
    private static final Inet4Address A_IP = ip("192.0.2.1");
    private static final Inet4Address B_IP = ip("192.0.2.2");

    @Test
    void forgedDatagramsChangeNeitherAProvenPeersProofNorThePathOfItsTraffic() throws Exception {
        try (UdpNode a = UdpNode.create("ufa"); UdpNode b = UdpNode.create("ufb"); UdpNode s = UdpNode.create("ufs")) {
            switched(s, a, b);
            UdpNetwork na = a.register("10.244.1.0/24", "ul0", "192.0.2.1", UdpOptions.withKernel());
            UdpNetwork nb = b.register("10.244.2.0/24", "ul0", "192.0.2.2", UdpOptions.withKernel());
            long start = System.nanoTime();
            a.apply(LeaseEvent.added(Leases.published("10.244.2.0/24", b.subnets.published())));
            b.apply(LeaseEvent.added(Leases.published("10.244.1.0/24", a.subnets.published())));
            Wait.until("A and B proved each other", Bounds.scaled(Duration.ofSeconds(20)),
                    () -> na.kernelPeerProven(B_IP) && nb.kernelPeerProven(A_IP));
            System.out.printf("proven both ways %d ms after the leases%n", (System.nanoTime() - start) / 1_000_000);
            UdpTwoNodesIT.assertTcpStreamArrivesIntact(a, b, "10.244.2.1", 1 << 20); // the first stream's stragglers before the ledger
            ProofEvidence before = na.kernelPeerSeen(B_IP);
            long toPeers = na.counters().packetsToPeers();
            long encap = na.kernelPackets()[KernelPrograms.COUNT_ENCAP];

            ListAppender<ILoggingEvent> lines = capture();
            try {
                Process spoofer = spoof(s, "10.244.2.0", "10.244.1.0", 2000, 400, "reply0,tcp0,tcpsum,replysum");
                UdpTwoNodesIT.assertTcpStreamArrivesIntact(a, b, "10.244.2.1", 16 << 20);
                int samples = sampleWhileRunning(spoofer, () -> assertThat(na.kernelPeerProven(B_IP))
                        .as("A's proof of B while forged").isTrue());
                assertThat(finish(spoofer)).startsWith("sent 2000 ");
                ProofEvidence forged = na.kernelPeerSeen(B_IP).since(before);
                System.out.println("forged: " + forged + " samples " + samples);
                assertThat(forged.otherAnswers()).as("forged answers that reached A's program").isGreaterThanOrEqualTo(800);
                assertThat(forged.checksummedTcp()).as("forged checksummed TCP that reached A's program").isGreaterThanOrEqualTo(400);
                assertThat(na.kernelPeerProven(B_IP)).as("A's proof of B after the forgeries").isTrue();
                assertThat(na.counters().packetsToPeers() - toPeers).as("sent to B by A's packet threads").isZero();
                assertThat(na.kernelPackets()[KernelPrograms.COUNT_ENCAP] - encap).as("sent to B by A's kernel").isGreaterThan(100);
                assertNoLinePerForgery(lines);
            } finally {
                release(lines);
            }
        }
    }

    @Test
    void forgedDatagramsDoNotProveAPeerWhoseKernelDoesNotEncapsulate() throws Exception {
        try (UdpNode a = UdpNode.create("uga"); UdpNode b = UdpNode.create("ugb"); UdpNode s = UdpNode.create("ugs")) {
            switched(s, a, b);
            UdpNetwork na = a.register("10.244.1.0/24", "ul0", "192.0.2.1", UdpOptions.withKernelEncap());
            UdpNetwork nb = b.register("10.244.2.0/24", "ul0", "192.0.2.2", UdpOptions.defaults());
            // A holds a lease of B that claims kernel decapsulation (stale, or a mistaken write): B is routed, unproven
            a.apply(LeaseEvent.added(Leases.published("10.244.2.0/24",
                    new LeaseAttrs(B_IP, null, "", UdpBackendData.KERNEL_DECAP, null))));
            b.apply(LeaseEvent.added(Leases.published("10.244.1.0/24", a.subnets.published())));
            assertThat(na.kernelPeers()).isEqualTo(1);
            Wait.until("B's daemon answered A's probe", Bounds.scaled(Duration.ofSeconds(20)),
                    () -> na.kernelPeerSeen(B_IP).daemonAnswers() > 0);
            ProofEvidence before = na.kernelPeerSeen(B_IP);
            long toPeers = na.counters().packetsToPeers();
            long encap = na.kernelPackets()[KernelPrograms.COUNT_ENCAP];

            ListAppender<ILoggingEvent> lines = capture();
            try {
                Process spoofer = spoof(s, "10.244.2.0", "10.244.1.0", 1500, 400, "reply0,tcp0,replysum");
                UdpTwoNodesIT.assertTcpStreamArrivesIntact(a, b, "10.244.2.1", 8 << 20);
                int samples = sampleWhileRunning(spoofer, () -> assertThat(na.kernelPeerProven(B_IP))
                        .as("A's proof of B while forged").isFalse());
                assertThat(finish(spoofer)).startsWith("sent 1500 ");
                ProofEvidence forged = na.kernelPeerSeen(B_IP).since(before);
                System.out.println("forged: " + forged + " samples " + samples);
                assertThat(forged.otherAnswers()).as("forged answers that reached A's program").isGreaterThanOrEqualTo(800);
                assertThat(forged.kernelAnswers()).as("counted as B's kernel's answers").isZero();
                assertThat(na.kernelPeerProven(B_IP)).as("A's proof of B after the forgeries").isFalse();
                // the probes' echoes (one a second) and nothing else from A's kernel; the stream through the packet threads
                assertThat(na.kernelPackets()[KernelPrograms.COUNT_ENCAP] - encap).as("sent to B by A's kernel").isLessThan(100);
                assertThat(na.counters().packetsToPeers() - toPeers).as("sent to B by A's packet threads").isGreaterThan(1000);
                assertThat(nb.counters().drops(UdpCounters.Drop.MALFORMED)).isZero();
                assertNoLinePerForgery(lines);
            } finally {
                release(lines);
            }
        }
    }

    /**
     * B, proven, restarts as an upstream-style node ({@code upstream_peer.py}: a plain TUN, checksummed datagrams) while A
     * keeps its lease that claims kernel decapsulation. B connects first: its checksummed SYN makes A probe at once, B's
     * daemon answers, A unproves B, and B's retransmitted SYN is answered through A's packet threads. Then the other
     * way with a fresh pair: A connects first (B's stack drops what A's kernel sends it, so B sends nothing), and A's
     * periodic probe unproves B within {@link PeerProof#REPROVE_EVERY_NANOS}. Prints both intervals.
     */
    @Test
    void aPeerRestartedAsUpstreamIsUnprovenByItsDaemonsAnswer() throws Exception {
        for (boolean peerFirst : new boolean[] {true, false}) {
            try (UdpNode a = UdpNode.create(peerFirst ? "ura" : "usa"); UdpNode b = UdpNode.create(peerFirst ? "urb" : "usb")) {
                UdpTwoNodesIT.join(a, b);
                UdpNetwork na = a.register("10.244.1.0/24", "ul0", "192.0.2.1", UdpOptions.withKernel());
                UdpNetwork nb = b.register("10.244.2.0/24", "ul0", "192.0.2.2", UdpOptions.withKernel());
                a.apply(LeaseEvent.added(Leases.published("10.244.2.0/24", b.subnets.published())));
                b.apply(LeaseEvent.added(Leases.published("10.244.1.0/24", a.subnets.published())));
                Wait.until("A and B proved each other", Bounds.scaled(Duration.ofSeconds(20)),
                        () -> na.kernelPeerProven(B_IP) && nb.kernelPeerProven(A_IP));
                nb.close();
                ListAppender<ILoggingEvent> lines = capture();
                Process peer = upstreamPeer(b);
                try {
                    long t0 = System.currentTimeMillis();
                    long connected = peerFirst ? connectMillis(b, a, "10.244.1.1") : connectMillis(a, b, "10.244.2.1");
                    Wait.until("A unproved B, and said so", Bounds.scaled(Duration.ofSeconds(20)), () -> !na.kernelPeerProven(B_IP)
                            && List.copyOf(lines.list).stream().anyMatch(e -> e.getFormattedMessage().startsWith("udp kernel peer unproven")));
                    long unprovenAt = List.copyOf(lines.list).stream().filter(e -> e.getFormattedMessage().startsWith("udp kernel peer unproven"))
                            .mapToLong(ILoggingEvent::getTimeStamp).findFirst().orElseThrow();
                    System.out.printf("%s connects first: A unproved B %d ms after the connect began, connected after %d ms%n",
                            peerFirst ? "the restarted peer" : "A", unprovenAt - t0, connected);
                    assertThat(List.copyOf(lines.list)).filteredOn(e -> e.getFormattedMessage().startsWith("udp kernel peer unproven")).hasSize(1)
                            .first().extracting(ILoggingEvent::getFormattedMessage).asString().contains("its daemon answered");
                    UdpTwoNodesIT.assertTcpStreamArrivesIntact(a, b, "10.244.2.1", 2 << 20);
                    UdpTwoNodesIT.assertTcpStreamArrivesIntact(b, a, "10.244.1.1", 2 << 20);
                } finally {
                    release(lines);
                    peer.destroy();
                    if (!peer.waitFor(10, TimeUnit.SECONDS)) {
                        peer.destroyForcibly();
                    }
                }
            }
        }
    }

    /** S holds the bridge that A's and B's {@code ul0} hang on, with an address of its own; A's and B's pods as {@link UdpTwoNodesIT#join}. */
    static void switched(UdpNode s, UdpNode a, UdpNode b) throws Exception {
        s.ip("link", "add", "br0", "type", "bridge");
        int i = 0;
        for (UdpNode n : new UdpNode[] {a, b}) {
            String port = "sw" + i++;
            s.ip("link", "add", port, "type", "veth", "peer", "name", "ul0", "netns", n.name());
            s.ip("link", "set", port, "master", "br0");
            s.ip("link", "set", port, "up");
        }
        s.ip("addr", "add", "192.0.2.9/24", "dev", "br0");
        s.ip("link", "set", "br0", "up");
        UdpTwoNodesIT.underlay(a, "192.0.2.1");
        UdpTwoNodesIT.underlay(b, "192.0.2.2");
        UdpTwoNodesIT.pod(a, "10.244.1.1/24");
        UdpTwoNodesIT.pod(b, "10.244.2.1/24");
    }

    /** {@code spoof_peer.py} in S: datagrams from B's public IP to A's udp port, inner packets {@code innerSrc → innerDst}. */
    private static Process spoof(UdpNode s, String innerSrc, String innerDst, int count, int rate, String kinds) throws Exception {
        Path script = Path.of(UdpKernelProofIT.class.getResource("/spoof_peer.py").toURI());
        return new ProcessBuilder("ip", "netns", "exec", s.name(), "python3", script.toString(), "192.0.2.2", "192.0.2.1", "8285",
                innerSrc, innerDst, String.valueOf(count), String.valueOf(rate), kinds).redirectErrorStream(true).start();
    }

    /** Runs {@code check} every 50 ms until the process ends (bounded: 2,400 times); how many times it ran. */
    private static int sampleWhileRunning(Process p, ThrowingRunnable check) throws Exception {
        int n = 0;
        do {
            check.run();
            n++;
        } while (!p.waitFor(50, TimeUnit.MILLISECONDS) && n < 2400);
        return n;
    }

    private interface ThrowingRunnable {
        void run() throws Exception;
    }

    /** The process's output once it ended (within a scaled minute; else killed and the test fails). */
    private static String finish(Process p) throws Exception {
        if (!p.waitFor(Bounds.scaled(Duration.ofSeconds(60)).toSeconds(), TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("spoofer did not end");
        }
        return new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
    }

    /** Every line the udp backend logs from now on. */
    private static ListAppender<ILoggingEvent> capture() {
        ListAppender<ILoggingEvent> lines = new ListAppender<>();
        lines.start();
        ((Logger) LoggerFactory.getLogger("org.jflannel.backend.udp")).addAppender(lines);
        return lines;
    }

    private static void release(ListAppender<ILoggingEvent> lines) {
        ((Logger) LoggerFactory.getLogger("org.jflannel.backend.udp")).detachAppender(lines);
    }

    /** Nothing about the peer's proof, and not a line per forgery (hundreds were sent): at most one per cause. */
    private static void assertNoLinePerForgery(ListAppender<ILoggingEvent> lines) {
        List<String> logged = List.copyOf(lines.list).stream().map(ILoggingEvent::getFormattedMessage).toList();
        assertThat(logged).as("lines logged while forged").noneMatch(l -> l.startsWith("udp kernel peer")).hasSizeLessThan(5);
    }

    /**
     * The upstream-style peer in B's namespace (checksummed datagrams, a plain TUN that verifies every checksum), with
     * the addresses upstream gives flannel0.
     */
    private static Process upstreamPeer(UdpNode b) throws Exception {
        Path script = Path.of(UdpKernelProofIT.class.getResource("/upstream_peer.py").toURI());
        Process peer = new ProcessBuilder("ip", "netns", "exec", b.name(), "python3", script.toString(),
                "flannel0", "192.0.2.2", "8285", "192.0.2.1", "8285", "300", "check").redirectErrorStream(true).start();
        BufferedReader out = new BufferedReader(new InputStreamReader(peer.getInputStream(), StandardCharsets.UTF_8));
        CompletableFuture<String> ready = CompletableFuture.supplyAsync(() -> {
            try {
                for (String l = out.readLine(); l != null; l = out.readLine()) {
                    if (l.equals("ready")) {
                        return l;
                    }
                }
                return "<eof>";
            } catch (java.io.IOException e) {
                throw new java.io.UncheckedIOException(e);
            }
        });
        assertThat(ready.get(30, TimeUnit.SECONDS)).as("upstream-style peer started").isEqualTo("ready");
        b.ip("addr", "add", "10.244.2.0/32", "dev", "flannel0");
        b.ip("link", "set", "flannel0", "mtu", "1472", "up");
        b.ip("route", "add", "10.244.0.0/16", "dev", "flannel0");
        return peer;
    }

    /** Milliseconds a TCP connect from {@code from} to {@code toAddress}:5002 in {@code to} took (its SYNs retried within a minute). */
    private static long connectMillis(UdpNode from, UdpNode to, String toAddress) throws Exception {
        try (ServerSocket ss = to.inside(() -> {
            ServerSocket x = new ServerSocket();
            x.bind(new InetSocketAddress(toAddress, 5002));
            return x;
        })) {
            return from.inside(() -> {
                long t = System.nanoTime();
                try (Socket c = new Socket()) {
                    c.connect(new InetSocketAddress(toAddress, 5002), (int) Bounds.scaled(Duration.ofSeconds(60)).toMillis());
                }
                return (System.nanoTime() - t) / 1_000_000;
            });
        }
    }

    private static Inet4Address ip(String a) {
        return Ip4Net.toInet(Ip4Net.parseAddress(a));
    }
}
