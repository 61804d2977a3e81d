package org.jflannel.backend.wireguard;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.jflannel.backend.wireguard.protocol.Timings;
import org.jflannel.core.Ip4Net;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseAttrs;
import org.jflannel.core.LeaseEvent;
import org.jflannel.testsupport.cluster.Cmd;
import org.jflannel.testsupport.cluster.Wait;
import org.jflannel.testsupport.netns.NetnsNames;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Our userspace WireGuard (node A, registered as the daemon registers it) against Debian's
 * {@code wireguard-go} (node B), which the test configures with {@code wg} and iproute2 exactly as
 * upstream flanneld configures its own side (REFERENCE §15): private key and ListenPort 51820, the
 * lease's network address /32 on the device, MTU − 80, the route of the whole Network through it,
 * and us as a peer with endpoint PublicIP:Port, allowed IPs our subnet, PSK when configured. B's
 * device has a unique name instead of {@code flannel-wg}: wireguard-go's control socket lives in
 * /var/run/wireguard, shared by all namespaces. Also over IPv6: our {@code flannel-wg-v6} against
 * wireguard-go set up as upstream's.
 */
@Tag("netns")
class WireguardGoInteropIT {
    private static final String POD_A = "10.244.1.1";
    private static final String POD_B = "10.244.2.1";
    private static final String POD6_A = "fd00:10:244:1::1";
    private static final String POD6_B = "fd00:10:244:2::1";

    @TempDir
    Path tmp;

    private String conf(byte[] psk) {
        return "{\"Network\":\"10.244.0.0/16\",\"Backend\":{\"Type\":\"wireguard\""
                + (psk == null ? "" : ",\"PSK\":\"" + Base64.getEncoder().encodeToString(psk) + "\"") + "}}";
    }

    @ParameterizedTest(name = "handshake initiated by {0}, PSK {1}")
    @CsvSource({"ours, false", "ours, true", "wireguard-go, false", "wireguard-go, true"})
    void pingAndCheckedTcpBothWays(String initiator, boolean withPsk) throws Exception {
        byte[] psk = null;
        if (withPsk) {
            psk = new byte[32];
            new SecureRandom().nextBytes(psk);
        }
        try (WgNode a = WgNode.create("wga"); WgNode b = WgNode.create("wgb"); WireguardGo go = WireguardGo.start(b, tmp)) {
            WgNode.join(a, b, POD_A + "/24", POD_B + "/24");
            Path keyFile = tmp.resolve("ours/wgkey");
            WireguardNetwork na = a.register(conf(psk), "10.244.1.0/24", "ul0", "192.0.2.1", 1500,
                    Map.of("WIREGUARD_KEY_FILE", keyFile.toString()), Timings.standard());
            assertThat(na.mtu()).isEqualTo(1420);
            // our key file is what `wg genkey` writes: wg derives the public key we publish
            assertThat(WgNode.run(List.of("sh", "-c", "wg pubkey < " + keyFile)).strip())
                    .isEqualTo(Base64.getEncoder().encodeToString(na.publicKey()));
            assertThat(a.subnets.published().backendType()).isEqualTo("wireguard");
            assertThat(a.subnets.published().backendData())
                    .isEqualTo("{\"PublicKey\":\"" + Base64.getEncoder().encodeToString(na.publicKey()) + "\",\"Port\":51820}");

            go.configureAsUpstream("10.244.2.0", na.publicKey(), "192.0.2.1:51820", "10.244.1.0/24", psk);
            na.apply(List.of(LeaseEvent.added(lease("10.244.2.0/24", "192.0.2.2", go.publicKey()))));

            if (initiator.equals("ours")) {
                assertThat(a.exec("ping", "-c", "3", "-W", "5", "-I", POD_A, POD_B)).contains("3 received");
                assertThat(na.counters().handshakesInitiated.sum()).isPositive();
            } else {
                assertThat(b.exec("ping", "-c", "3", "-W", "5", "-I", POD_B, POD_A)).contains("3 received");
                // apart from the one initiation on learning the peer (a restarted node's; wireguard-go may not know us yet)
                assertThat(na.counters().handshakesInitiated.sum() - na.counters().handshakesSpeculative.sum())
                    .as("we only responded").isZero();
            }
            assertThat(go.latestHandshake()).as("wireguard-go saw a handshake").isPositive();
            assertThat(na.counters().handshakesCompleted.sum()).isEqualTo(1);
            assertThat(b.exec("ping", "-c", "2", "-W", "5", "-I", POD_B, POD_A)).contains("2 received");
            assertThat(a.exec("ping", "-c", "2", "-W", "5", "-I", POD_A, POD_B)).contains("2 received");

            WgNode.tcpTransferCrc(a, b, POD_B, 8 << 20);
            WgNode.tcpTransferCrc(b, a, POD_A, 8 << 20);
            assertThat(na.counters().droppedBadAuth.sum() + na.counters().droppedBadSource.sum()).isZero();
            assertThat(na.counters().rxPackets.sum()).isGreaterThan(5000);
        }
    }

    @Test
    void rekeysAfterAForcedShortRekeyIntervalWithoutLosingTheStream() throws Exception {
        try (WgNode a = WgNode.create("wra"); WgNode b = WgNode.create("wrb"); WireguardGo go = WireguardGo.start(b, tmp)) {
            WgNode.join(a, b, POD_A + "/24", POD_B + "/24");
            // REKEY_AFTER_TIME 3 s (REKEY_TIMEOUT keeps initiations at least 5 s apart)
            WireguardNetwork na = a.register(conf(null), "10.244.1.0/24", "ul0", "192.0.2.1", 1500,
                    Map.of("WIREGUARD_KEY_FILE", tmp.resolve("k").toString()), Timings.standard().withRekeyAfterTime(Duration.ofSeconds(3)));
            go.configureAsUpstream("10.244.2.0", na.publicKey(), "192.0.2.1:51820", "10.244.1.0/24", null);
            na.apply(List.of(LeaseEvent.added(lease("10.244.2.0/24", "192.0.2.2", go.publicKey()))));
            assertThat(a.exec("ping", "-c", "1", "-W", "5", "-I", POD_A, POD_B)).contains("1 received");
            long first = go.latestHandshake();
            Wait.until("three handshakes (two rekeys) while traffic flows", Duration.ofSeconds(60), () -> {
                a.execAnyExit("ping", "-c", "5", "-i", "0.2", "-W", "2", "-I", POD_A, POD_B);
                return na.counters().handshakesCompleted.sum() >= 3;
            });
            assertThat(go.latestHandshake()).as("wireguard-go's latest handshake moved on").isGreaterThan(first);
            WgNode.tcpTransferCrc(a, b, POD_B, 8 << 20);
            WgNode.tcpTransferCrc(b, a, POD_A, 8 << 20);
            assertThat(a.exec("ping", "-c", "2", "-W", "5", "-I", POD_A, POD_B)).contains("2 received");
        }
    }

    static Lease lease(String subnet, String publicIp, byte[] publicKey) {
        return new Lease(Ip4Net.parse(subnet), null, new LeaseAttrs(Ip4Net.toInet(Ip4Net.parseAddress(publicIp)), null, "wireguard",
                "{\"PublicKey\":\"" + Base64.getEncoder().encodeToString(publicKey) + "\",\"Port\":51820}", null), null);
    }
    /**
     * Separate mode over an IPv6 underlay: our {@code flannel-wg-v6} against wireguard-go configured as
     * upstream's {@code flannel-wg-v6} (ListenPortV6 51821, the IPv6 lease address /128, the route of
     * the IPv6Network, us at {@code [2001:db8::1]:51821} with our IPv6 subnet), PSK on: ping6 started
     * by each side, then a CRC-checked TCP stream over IPv6 both ways.
     */
    @Test
    void ipv6EndpointSeparateModePing6AndTcpBothWays() throws Exception {
        byte[] psk = new byte[32];
        new SecureRandom().nextBytes(psk);
        String conf = "{\"EnableIPv6\":true,\"Network\":\"10.244.0.0/16\",\"IPv6Network\":\"fd00:10:244::/56\","
                + "\"Backend\":{\"Type\":\"wireguard\",\"PSK\":\"" + Base64.getEncoder().encodeToString(psk) + "\"}}";
        try (WgNode a = WgNode.create("wg6a"); WgNode b = WgNode.create("wg6b"); WireguardGo go = WireguardGo.start(b, tmp)) {
            WgNode.joinDualStack(a, b, "192.0.2", new String[] {POD_A + "/24", POD6_A + "/64"}, new String[] {POD_B + "/24", POD6_B + "/64"});
            WireguardNetwork na = a.register(conf, "10.244.1.0/24", "fd00:10:244:1::/64", "ul0", "192.0.2.1", "2001:db8::1", 1500,
                    Map.of("WIREGUARD_KEY_FILE", tmp.resolve("ours6").toString()));
            go.configureAsUpstreamV6("fd00:10:244:2::", na.publicKey(), "[2001:db8::1]:51821", "fd00:10:244:1::/64", psk);
            String k = Base64.getEncoder().encodeToString(go.publicKey());
            na.apply(List.of(LeaseEvent.added(new Lease(null, org.jflannel.core.Ip6Net.parse("fd00:10:244:2::/64"),
                    new LeaseAttrs(null, (java.net.Inet6Address) java.net.InetAddress.getByName("2001:db8::2"), "wireguard", null,
                            "{\"PublicKey\":\"" + k + "\"}"), null))));
            var v6 = na.device("flannel-wg-v6");

            assertThat(a.exec("ping", "-c", "2", "-W", "5", "-I", POD6_A, POD6_B)).contains("2 received");
            assertThat(v6.counters().handshakesInitiated.sum()).isPositive();
            assertThat(go.latestHandshake()).as("wireguard-go saw a handshake over IPv6").isPositive();
            assertThat(b.exec("ping", "-c", "2", "-W", "5", "-I", POD6_B, POD6_A)).contains("2 received");
            assertThat(b.exec("wg", "show", go.dev, "endpoints")).contains("[2001:db8::1]:51821");

            WgNode.tcpTransferCrc(a, b, POD6_B, 8 << 20);
            WgNode.tcpTransferCrc(b, a, POD6_A, 8 << 20);
            assertThat(v6.counters().droppedBadAuth.sum() + v6.counters().droppedBadSource.sum()).isZero();
            assertThat(v6.counters().rxPackets.sum()).isGreaterThan(5000);
        }
    }

    /** Debian's wireguard-go in the foreground in a node's namespace, our child: ended by its own handle. */
    static final class WireguardGo implements AutoCloseable {
        final WgNode node;
        final String dev;
        final Process process;
        final Path dir;
        private byte[] publicKey;

        private WireguardGo(WgNode node, String dev, Process process, Path dir) {
            this.node = node;
            this.dev = dev;
            this.process = process;
            this.dir = dir;
        }

        static WireguardGo start(WgNode node, Path tmp) throws Exception {
            String dev = NetnsNames.unique("wg");
            Path dir = Files.createDirectories(tmp.resolve(dev));
            ProcessBuilder pb = new ProcessBuilder("ip", "netns", "exec", node.name(), "wireguard-go", "-f", dev)
                    .redirectErrorStream(true).redirectOutput(dir.resolve("wireguard-go.log").toFile());
            pb.environment().put("LOG_LEVEL", "debug");
            WireguardGo go = new WireguardGo(node, dev, pb.start(), dir);
            try {
                Wait.until("wireguard-go's device " + dev, Duration.ofSeconds(20), () -> {
                    if (!go.process.isAlive()) {
                        throw new Wait.Abort("wireguard-go exited: " + Files.readString(dir.resolve("wireguard-go.log")));
                    }
                    return Cmd.run(Duration.ofSeconds(10), List.of("ip", "netns", "exec", node.name(), "wg", "show", dev)).ok();
                });
            } catch (Exception e) {
                go.close();
                throw e;
            }
            return go;
        }

        /** What upstream's flanneld does to its own device and to us as its peer (REFERENCE §15). */
        void configureAsUpstream(String ownAddress, byte[] peerKey, String peerEndpoint, String peerAllowed, byte[] psk)
                throws Exception {
            String priv = WgNode.run(List.of("wg", "genkey")).strip();
            Path keyFile = dir.resolve("key");
            Files.writeString(keyFile, priv);
            publicKey = Base64.getDecoder().decode(WgNode.run(List.of("sh", "-c", "wg pubkey < " + keyFile)).strip());
            node.exec("wg", "set", dev, "private-key", keyFile.toString(), "listen-port", "51820");
            node.ip("addr", "add", ownAddress + "/32", "dev", dev);
            node.ip("link", "set", dev, "mtu", "1420", "up");
            node.ip("route", "add", "10.244.0.0/16", "dev", dev);
            List<String> peer = new java.util.ArrayList<>(List.of("wg", "set", dev, "peer", Base64.getEncoder().encodeToString(peerKey),
                    "endpoint", peerEndpoint, "allowed-ips", peerAllowed, "persistent-keepalive", "0"));
            if (psk != null) {
                Path pskFile = dir.resolve("psk");
                Files.writeString(pskFile, Base64.getEncoder().encodeToString(psk));
                peer.addAll(List.of("preshared-key", pskFile.toString()));
            }
            node.exec(peer.toArray(String[]::new));
        }

        /** Upstream's flannel-wg-v6 (separate mode): ListenPortV6, the lease's IPv6 address /128, the IPv6Network's route. */
        void configureAsUpstreamV6(String ownAddress, byte[] peerKey, String peerEndpoint, String peerAllowed, byte[] psk)
                throws Exception {
            String priv = WgNode.run(List.of("wg", "genkey")).strip();
            Path keyFile = dir.resolve("key");
            Files.writeString(keyFile, priv);
            publicKey = Base64.getDecoder().decode(WgNode.run(List.of("sh", "-c", "wg pubkey < " + keyFile)).strip());
            node.exec("wg", "set", dev, "private-key", keyFile.toString(), "listen-port", "51821");
            node.ip("-6", "addr", "add", ownAddress + "/128", "dev", dev, "nodad");
            node.ip("link", "set", dev, "mtu", "1420", "up");
            node.ip("-6", "route", "add", "fd00:10:244::/56", "dev", dev);
            Path pskFile = dir.resolve("psk");
            Files.writeString(pskFile, Base64.getEncoder().encodeToString(psk));
            node.exec("wg", "set", dev, "peer", Base64.getEncoder().encodeToString(peerKey), "endpoint", peerEndpoint,
                    "allowed-ips", peerAllowed, "persistent-keepalive", "0", "preshared-key", pskFile.toString());
        }

        byte[] publicKey() {
            return publicKey.clone();
        }

        /** wg show DEV latest-handshakes: the unix time of our peer's last handshake (0: none). */
        long latestHandshake() throws Exception {
            String out = node.exec("wg", "show", dev, "latest-handshakes").strip();
            return out.isEmpty() ? 0 : Long.parseLong(out.split("\\s+")[1]);
        }

        @Override
        public void close() throws Exception {
            process.destroy();
            if (!process.waitFor(10, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        }
    }
}
