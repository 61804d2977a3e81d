package org.jflannel.backend.wireguard;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.Base64;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import org.jflannel.backend.wireguard.protocol.Messages;
import org.jflannel.testsupport.cluster.Wait;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.jflannel.backend.wireguard.protocol.Timings;
import org.jflannel.core.LeaseEvent;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two of our wireguard networks in two namespaces: upstream's device and route on each side, the
 * first packet of each direction carried (staged behind the handshake, not lost), both nodes
 * sending first at the same moment (crossed initiations), a checked TCP stream both ways, a
 * replayed and a forged datagram dropped and counted, a flood of initiations answered with cookies
 * while the session carries on, each side's per-peer stats (bytes both ways alike, the handshake's time),
 * a removed peer's traffic dropped and counted and its stats gone,
 * the device gone after close.
 */
@Tag("netns")
class WireguardTwoNodesIT {
    private static final InetSocketAddress B_UNDERLAY = new InetSocketAddress("192.0.2.2", 0);
    private static final InetSocketAddress A_WIREGUARD = new InetSocketAddress("192.0.2.1", 51820);
    private static final String CONF = "{\"Network\":\"10.244.0.0/16\",\"Backend\":{\"Type\":\"wireguard\"}}";

    @TempDir
    Path tmp;

    @Test
    void firstPacketsBothWaysAtOnceThenTcpAndCleanClose() throws Exception {
        try (WgNode a = WgNode.create("wta"); WgNode b = WgNode.create("wtb")) {
            WgNode.join(a, b, "10.244.1.1/24", "10.244.2.1/24");
            // A seals and opens its batches with a crypto thread (Workers), B on its packet threads alone (the default
            // on 2 CPUs): the TCP transfers below cross both paths each way
            WireguardNetwork na = a.register(CONF, "10.244.1.0/24", "ul0", "192.0.2.1", 1500,
                    Map.of("WIREGUARD_KEY_FILE", tmp.resolve("a").toString(), "JFLANNEL_WG_CRYPTO_THREADS", "1"), Timings.standard());
            WireguardNetwork nb = b.register(CONF, "10.244.2.0/24", "ul0", "192.0.2.2", 1500,
                    Map.of("WIREGUARD_KEY_FILE", tmp.resolve("b").toString(), "JFLANNEL_WG_CRYPTO_THREADS", "0"), Timings.standard());
            na.apply(List.of(LeaseEvent.added(WireguardGoInteropIT.lease("10.244.2.0/24", "192.0.2.2", nb.publicKey()))));
            nb.apply(List.of(LeaseEvent.added(WireguardGoInteropIT.lease("10.244.1.0/24", "192.0.2.1", na.publicKey()))));

            assertThat(a.ip("-4", "-o", "addr", "show", "dev", "flannel-wg")).contains("10.244.1.0/32");
            assertThat(a.ip("route", "show", "10.244.0.0/16")).contains("dev flannel-wg");
            assertThat(a.ip("link", "show", "flannel-wg")).contains("mtu 1420");

            Instant beforeHandshake = Instant.now();
            CompletableFuture<String> ab = CompletableFuture.supplyAsync(() -> ping(a, "10.244.1.1", "10.244.2.1"));
            CompletableFuture<String> ba = CompletableFuture.supplyAsync(() -> ping(b, "10.244.2.1", "10.244.1.1"));
            String pa = ab.get();
            String pb = ba.get();
            System.out.println("a->b: " + pa + "\nb->a: " + pb + "\na: " + na.counters() + "\nb: " + nb.counters());
            assertThat(pa).as("a->b first echo (single ping, 2 s)").contains("1 received");
            assertThat(pb).as("b->a first echo (single ping, 2 s)").contains("1 received");
            peerStatsAgree(na, nb, beforeHandshake);

            WgNode.tcpTransferCrc(a, b, "10.244.2.1", 8 << 20);
            WgNode.tcpTransferCrc(b, a, "10.244.1.1", 8 << 20);
            long bFromA = onlyPeer(nb).rxBytes(); // read before A's side: what B took cannot exceed what A sent before
            assertThat(bFromA).as("the 8 MiB stream A sent, sealed").isGreaterThan(8 << 20);
            assertThat(onlyPeer(na).txBytes()).isGreaterThanOrEqualTo(bFromA);

            // a datagram B sent, replayed, then forged (fresh counter, one ciphertext bit flipped): both dropped, counted
            byte[] captured = captureOneDatagramFromB(a, b);
            long replays = na.counters().droppedReplay.sum();
            sendFromB(b, captured);
            Wait.until("the replay counted", Duration.ofSeconds(10), () -> na.counters().droppedReplay.sum() == replays + 1);
            byte[] forged = captured.clone();
            forged[8 + 5] ^= 0x01; // counter += 2^40: new to the window, so only the tag can refuse it
            forged[forged.length - 20] ^= 0x40;
            long badAuth = na.counters().droppedBadAuth.sum();
            sendFromB(b, forged);
            Wait.until("the forgery counted", Duration.ofSeconds(10), () -> na.counters().droppedBadAuth.sum() == badAuth + 1);

            // a flood of initiations that pass mac1 (anyone who knows A's public key can make them) from a key A
            // does not know: A goes under load and answers with cookies instead of Curve25519 work; the session stays
            long cookies = na.counters().cookieRepliesSent.sum();
            long handshakes = na.counters().handshakesCompleted.sum();
            byte[][] flood = HandshakeFlood.initiations(na.publicKey(), 300);
            b.inside(() -> {
                HandshakeFlood.send(B_UNDERLAY, A_WIREGUARD, flood);
                return null;
            });
            Wait.until("cookie replies under the flood", Duration.ofSeconds(20), () -> na.counters().cookieRepliesSent.sum() > cookies);
            assertThat(ping(b, "10.244.2.1", "10.244.1.1")).as("the session during the load").contains("1 received");
            assertThat(ping(a, "10.244.1.1", "10.244.2.1")).contains("1 received");
            assertThat(na.counters().handshakesCompleted.sum()).isEqualTo(handshakes);

            // the same from a sender that answers cookies (it receives at its address): its mac2 is valid, so
            // only the rate per source address (20 a second, 5 at once) keeps A from the Curve25519 work
            long limited = na.counters().droppedRateLimited.sum();
            long refused = na.counters().droppedBadHandshake.sum();
            int sent = b.inside(() -> HandshakeFlood.withCookie(B_UNDERLAY, A_WIREGUARD, na.publicKey(), 300));
            Wait.until("the cookie-carrying flood counted", Duration.ofSeconds(20), () -> na.counters().droppedRateLimited.sum() - limited
                    + na.counters().droppedBadHandshake.sum() - refused >= sent - 10);
            System.out.println("flood with a cookie: sent=" + sent + " rateLimited=" + (na.counters().droppedRateLimited.sum() - limited)
                    + " refused after the work=" + (na.counters().droppedBadHandshake.sum() - refused));
            assertThat(na.counters().droppedRateLimited.sum() - limited).as("dropped by the rate per source").isGreaterThanOrEqualTo(sent * 2L / 3);
            assertThat(ping(b, "10.244.2.1", "10.244.1.1")).as("the session after the cookie flood").contains("1 received");

            // B's lease removed on A: A forgets B's key and sessions; what B still sends is dropped and counted
            na.apply(List.of(LeaseEvent.removed(WireguardGoInteropIT.lease("10.244.2.0/24", "192.0.2.2", nb.publicKey()))));
            assertThat(na.peers()).isZero();
            assertThat(na.peerStats("flannel-wg")).as("a removed peer's stats go with it").isEmpty();
            assertThat(b.execAnyExit("ping", "-n", "-c", "2", "-W", "1", "-I", "10.244.2.1", "10.244.1.1")).contains("0 received");
            // counted by A's receiving thread, which may not have taken B's last datagram yet
            Wait.until("B's datagrams dropped as of an unknown index", Duration.ofSeconds(10),
                    () -> na.counters().droppedUnknownIndex.sum() > 0);
            assertThat(na.counters().droppedUnknownIndex.sum()).isPositive();

            na.close();
            assertThat(a.execAnyExit("ip", "link", "show", "flannel-wg")).contains("does not exist");
        }
    }

    /**
     * Each side's stats of the other, after the first echoes: the key and endpoint configured, the handshake's wall
     * clock between {@code before} and now, and bytes each way that both sides count alike once what is in flight
     * has landed (A's sent to B are B's received from A and back: handshake, data and keepalive messages, whole; an
     * initiation that crossed the receiver's own and lost is the one message sent and not received).
     */
    private static void peerStatsAgree(WireguardNetwork na, WireguardNetwork nb, Instant before) throws Exception {
        Wait.until("A's bytes sent to B are B's received from A, and back", Duration.ofSeconds(10), () -> {
            PeerStats bOnA = onlyPeer(na);
            PeerStats aOnB = onlyPeer(nb);
            // an initiation the receiver did not answer (the initiations crossed and its own won) is sent, not received
            long ignoredByB = nb.counters().crossedInitiationsIgnored.sum() * Messages.INITIATION_SIZE;
            long ignoredByA = na.counters().crossedInitiationsIgnored.sum() * Messages.INITIATION_SIZE;
            return bOnA.txBytes() == aOnB.rxBytes() + ignoredByB && aOnB.txBytes() == bOnA.rxBytes() + ignoredByA;
        });
        PeerStats bOnA = onlyPeer(na);
        assertThat(bOnA.publicKey()).isEqualTo(Base64.getEncoder().encodeToString(nb.publicKey()));
        assertThat(bOnA.endpoint()).hasToString("192.0.2.2:51820");
        assertThat(bOnA.txBytes()).as("at least the echo request and reply, 84 bytes of IP each, sealed").isGreaterThanOrEqualTo(128);
        assertThat(bOnA.rxBytes()).isGreaterThanOrEqualTo(128);
        assertThat(bOnA.lastHandshake()).hasValueSatisfying(t -> assertThat(t).isBetween(before, Instant.now()));
        assertThat(onlyPeer(nb).lastHandshake()).hasValueSatisfying(t -> assertThat(t).isBetween(before, Instant.now()));
    }

    private static PeerStats onlyPeer(WireguardNetwork n) throws Exception {
        List<PeerStats> stats = n.peerStats("flannel-wg");
        assertThat(stats).hasSize(1);
        return stats.get(0);
    }

    /** One WireGuard data datagram B sends to A, captured on A's underlay (tcpdump --immediate-mode, our child). */
    private static byte[] captureOneDatagramFromB(WgNode a, WgNode b) throws Exception {
        Path pcap = Files.createTempFile("wg-one", ".pcap");
        Path log = Files.createTempFile("wg-one", ".log");
        Process dump = new ProcessBuilder("ip", "netns", "exec", a.name(), "timeout", "30", "tcpdump", "-i", "ul0", "-n", "-U",
                "--immediate-mode", "-c", "1", "-w", pcap.toString(), "udp and src host 192.0.2.2 and dst port 51820 and greater 120")
                .redirectErrorStream(true).redirectOutput(log.toFile()).start();
        try {
            Wait.until("tcpdump listening", Duration.ofSeconds(20), () -> Files.readString(log).contains("listening on"));
            Wait.until("one datagram from B captured", Duration.ofSeconds(20), () -> {
                ping(b, "10.244.2.1", "10.244.1.1");
                return !dump.isAlive();
            });
        } finally {
            dump.destroy();
            dump.waitFor(10, TimeUnit.SECONDS);
        }
        byte[] file = Files.readAllBytes(pcap);
        Files.delete(pcap);
        Files.delete(log);
        // pcap: 24-byte file header, 16-byte record header, Ethernet 14, IPv4 (IHL), UDP 8, then the WireGuard message
        int ip = 24 + 16 + 14;
        int udp = ip + (file[ip] & 0x0f) * 4;
        int len = ((file[udp + 4] & 0xff) << 8 | (file[udp + 5] & 0xff)) - 8;
        byte[] msg = Arrays.copyOfRange(file, udp + 8, udp + 8 + len);
        assertThat(msg[0]).as("a transport data message").isEqualTo((byte) 4);
        return msg;
    }

    private static void sendFromB(WgNode b, byte[] msg) throws Exception {
        b.inside(() -> {
            HandshakeFlood.send(B_UNDERLAY, A_WIREGUARD, new byte[][] {msg});
            return null;
        });
    }

    private static String ping(WgNode n, String from, String to) {
        try {
            return n.execAnyExit("ping", "-n", "-c", "1", "-W", "2", "-I", from, to);
        } catch (Exception e) {
            return e.toString();
        }
    }
}
