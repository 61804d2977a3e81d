package org.jflannel.backend.wireguard;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.nio.file.Path;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.jflannel.backend.wireguard.protocol.Endpoint;
import org.jflannel.core.Ip4Net;
import org.jflannel.core.Ip6Net;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseAttrs;
import org.jflannel.core.LeaseEvent;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Two of our dual-stack wireguard networks in two namespaces. Separate mode: {@code flannel-wg} for
 * IPv4 and {@code flannel-wg-v6} for IPv6 with upstream's addresses, routes and MTU, the lease data of
 * both families, ping6 both ways (the first echo staged behind the handshake, not lost) and a
 * CRC-checked TCP stream over IPv6 both ways, IPv4 alongside. Auto mode: one {@code flannel-wg}
 * carrying both families to the peer's IPv6 endpoint (upstream's choice when its IPv4 is private);
 * the IPv4 underlay addresses are then deleted, so both families must cross an IPv6-only underlay.
 * An IPv6-only cluster in Mode ipv6: one {@code flannel-wg}, IPv6 only. A datagram from source port 0
 * is ignored (it used to end the socket thread).
 */
@Tag("netns")
class WireguardIpv6IT {
    private static final String NETS = "\"EnableIPv6\":true,\"Network\":\"10.244.0.0/16\",\"IPv6Network\":\"fd00:10:244::/56\"";
    private static final String[] PODS_A = {"10.244.1.1/24", "fd00:10:244:1::1/64"};
    private static final String[] PODS_B = {"10.244.2.1/24", "fd00:10:244:2::1/64"};

    @TempDir
    Path tmp;

    @Test
    void separateModeTwoDevicesPing6AndTcpOverIpv6BothWays() throws Exception {
        String conf = "{" + NETS + ",\"Backend\":{\"Type\":\"wireguard\"}}";
        try (WgNode a = WgNode.create("w6a"); WgNode b = WgNode.create("w6b")) {
            WgNode.joinDualStack(a, b, "192.0.2", PODS_A, PODS_B);
            WireguardNetwork na = a.register(conf, "10.244.1.0/24", "fd00:10:244:1::/64", "ul0", "192.0.2.1", "2001:db8::1", 1500,
                    Map.of("WIREGUARD_KEY_FILE", tmp.resolve("a").toString()));
            WireguardNetwork nb = b.register(conf, "10.244.2.0/24", "fd00:10:244:2::/64", "ul0", "192.0.2.2", "2001:db8::2", 1500,
                    Map.of("WIREGUARD_KEY_FILE", tmp.resolve("b").toString()));
            assertThat(na.deviceNames()).containsExactly("flannel-wg", "flannel-wg-v6");
            String key = Base64.getEncoder().encodeToString(na.publicKey());
            LeaseAttrs published = a.subnets.published();
            assertThat(published.backendData()).isEqualTo("{\"PublicKey\":\"" + key + "\",\"Port\":51820}");
            assertThat(published.backendV6Data()).isEqualTo("{\"PublicKey\":\"" + key + "\",\"Port\":51821}");
            assertThat(published.publicIpv6()).isEqualTo(InetAddress.getByName("2001:db8::1"));

            na.apply(List.of(LeaseEvent.added(lease("10.244.2.0/24", "fd00:10:244:2::/64", "192.0.2.2", "2001:db8::2", nb.publicKey(), 51821))));
            nb.apply(List.of(LeaseEvent.added(lease("10.244.1.0/24", "fd00:10:244:1::/64", "192.0.2.1", "2001:db8::1", na.publicKey(), 51821))));

            assertThat(a.ip("-4", "-o", "addr", "show", "dev", "flannel-wg")).contains("10.244.1.0/32");
            assertThat(a.ip("-6", "-o", "addr", "show", "dev", "flannel-wg-v6")).contains("fd00:10:244:1::/128");
            assertThat(a.ip("-6", "route", "show", "fd00:10:244::/56")).contains("dev flannel-wg-v6");
            assertThat(a.ip("route", "show", "10.244.0.0/16")).contains("dev flannel-wg");
            assertThat(a.ip("link", "show", "flannel-wg-v6")).contains("mtu 1420");
            assertThat(a.exec("ss", "-uln")).contains("[2001:db8::1]:51821").contains("192.0.2.1:51820");
            assertThat(na.device("flannel-wg-v6").peer(nb.publicKey()).orElseThrow().endpoint())
                    .isEqualTo(Endpoint.of(InetAddress.getByName("2001:db8::2"), 51821));
            assertThat(na.device("flannel-wg").peer(nb.publicKey()).orElseThrow().allowedIps()).hasSize(1);

            CompletableFuture<String> ab = CompletableFuture.supplyAsync(() -> ping(a, "fd00:10:244:1::1", "fd00:10:244:2::1"));
            CompletableFuture<String> ba = CompletableFuture.supplyAsync(() -> ping(b, "fd00:10:244:2::1", "fd00:10:244:1::1"));
            String pa = ab.get();
            String pb = ba.get();
            System.out.println("a->b: " + pa + "\nb->a: " + pb + "\na v6: " + na.device("flannel-wg-v6").counters());
            assertThat(pa).as("a->b first echo over IPv6").contains("1 received");
            assertThat(pb).as("b->a first echo over IPv6").contains("1 received");
            assertThat(ping(a, "10.244.1.1", "10.244.2.1")).as("IPv4 alongside, on flannel-wg").contains("1 received");

            // a datagram from UDP source port 0 (a raw socket can send one): ignored, the socket thread goes on
            b.exec("python3", "-c", "import socket; s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_UDP); "
                    + "s.sendto(bytes([0, 0, 0xca, 0x6c, 0, 40, 0, 0]) + bytes([4]) + bytes(31), ('192.0.2.1', 0))");
            assertThat(ping(b, "10.244.2.1", "10.244.1.1")).as("flannel-wg still answers after a port-0 datagram").contains("1 received");

            WgNode.tcpTransferCrc(a, b, "fd00:10:244:2::1", 8 << 20);
            WgNode.tcpTransferCrc(b, a, "fd00:10:244:1::1", 8 << 20);
            assertThat(na.device("flannel-wg-v6").counters().rxBytes.sum()).as("the IPv6 stream came through flannel-wg-v6")
                    .isGreaterThan(8 << 20);
            assertThat(na.device("flannel-wg").counters().rxBytes.sum()).isLessThan(1 << 20);

            na.close();
            assertThat(a.execAnyExit("ip", "link", "show", "flannel-wg-v6")).contains("does not exist");
            assertThat(a.execAnyExit("ip", "link", "show", "flannel-wg")).contains("does not exist");
        }
    }

    @Test
    void autoModeOneDeviceCarriesBothFamiliesToTheIpv6EndpointAcrossAnIpv6OnlyUnderlay() throws Exception {
        String conf = "{" + NETS + ",\"Backend\":{\"Type\":\"wireguard\",\"Mode\":\"auto\"}}";
        try (WgNode a = WgNode.create("w6c"); WgNode b = WgNode.create("w6d")) {
            // private IPv4 (RFC 1918), public IPv6: upstream's auto mode picks the IPv6 endpoint
            WgNode.joinDualStack(a, b, "10.99.0", PODS_A, PODS_B);
            WireguardNetwork na = a.register(conf, "10.244.1.0/24", "fd00:10:244:1::/64", "ul0", "10.99.0.1", "2001:db8::1", 1500,
                    Map.of("WIREGUARD_KEY_FILE", tmp.resolve("c").toString()));
            WireguardNetwork nb = b.register(conf, "10.244.2.0/24", "fd00:10:244:2::/64", "ul0", "10.99.0.2", "2001:db8::2", 1500,
                    Map.of("WIREGUARD_KEY_FILE", tmp.resolve("d").toString()));
            assertThat(na.deviceNames()).containsExactly("flannel-wg");
            assertThat(a.subnets.published().backendV6Data()).contains("\"Port\":51820");

            na.apply(List.of(LeaseEvent.added(lease("10.244.2.0/24", "fd00:10:244:2::/64", "10.99.0.2", "2001:db8::2", nb.publicKey(), 51820))));
            nb.apply(List.of(LeaseEvent.added(lease("10.244.1.0/24", "fd00:10:244:1::/64", "10.99.0.1", "2001:db8::1", na.publicKey(), 51820))));
            var peer = na.device().peer(nb.publicKey()).orElseThrow();
            assertThat(peer.endpoint()).isEqualTo(Endpoint.of(InetAddress.getByName("2001:db8::2"), 51820));
            assertThat(peer.allowedIps()).hasSize(2);
            assertThat(a.ip("-6", "-o", "addr", "show", "dev", "flannel-wg")).contains("fd00:10:244:1::/128");
            assertThat(a.ip("-4", "-o", "addr", "show", "dev", "flannel-wg")).contains("10.244.1.0/32");
            assertThat(a.ip("-6", "route", "show", "fd00:10:244::/56")).contains("dev flannel-wg");
            assertThat(a.exec("ss", "-uln")).contains("*:51820");

            // no IPv4 left on the underlay: both families must go over the IPv6 endpoint
            a.ip("addr", "del", "10.99.0.1/24", "dev", "ul0");
            b.ip("addr", "del", "10.99.0.2/24", "dev", "ul0");

            CompletableFuture<String> ab = CompletableFuture.supplyAsync(() -> ping(a, "fd00:10:244:1::1", "fd00:10:244:2::1"));
            CompletableFuture<String> ba = CompletableFuture.supplyAsync(() -> ping(b, "10.244.2.1", "10.244.1.1"));
            assertThat(ab.get()).as("a->b first echo, IPv6 in IPv6").contains("1 received");
            assertThat(ba.get()).as("b->a first echo, IPv4 in IPv6").contains("1 received");
            assertThat(ping(b, "fd00:10:244:2::1", "fd00:10:244:1::1")).contains("1 received");
            assertThat(ping(a, "10.244.1.1", "10.244.2.1")).contains("1 received");

            WgNode.tcpTransferCrc(a, b, "fd00:10:244:2::1", 8 << 20);
            WgNode.tcpTransferCrc(b, a, "fd00:10:244:1::1", 8 << 20);
            WgNode.tcpTransferCrc(a, b, "10.244.2.1", 8 << 20);
            System.out.println("a: " + na.counters() + "\nb: " + nb.counters());
        }
    }

    @Test
    void ipv6OnlyClusterInModeIpv6() throws Exception {
        String conf = "{\"EnableIPv4\":false,\"EnableIPv6\":true,\"IPv6Network\":\"fd00:10:244::/56\","
                + "\"Backend\":{\"Type\":\"wireguard\",\"Mode\":\"ipv6\"}}";
        try (WgNode a = WgNode.create("w6e"); WgNode b = WgNode.create("w6f")) {
            WgNode.joinDualStack(a, b, "192.0.2", new String[] {PODS_A[1]}, new String[] {PODS_B[1]});
            WireguardNetwork na = a.register(conf, null, "fd00:10:244:1::/64", "ul0", null, "2001:db8::1", 1500,
                    Map.of("WIREGUARD_KEY_FILE", tmp.resolve("e").toString()));
            WireguardNetwork nb = b.register(conf, null, "fd00:10:244:2::/64", "ul0", null, "2001:db8::2", 1500,
                    Map.of("WIREGUARD_KEY_FILE", tmp.resolve("f").toString()));
            assertThat(na.deviceNames()).containsExactly("flannel-wg");
            assertThat(a.subnets.published().backendData()).isNull();
            assertThat(a.subnets.published().publicIp()).isNull();
            na.apply(List.of(LeaseEvent.added(lease6("fd00:10:244:2::/64", "2001:db8::2", nb.publicKey()))));
            nb.apply(List.of(LeaseEvent.added(lease6("fd00:10:244:1::/64", "2001:db8::1", na.publicKey()))));
            assertThat(a.ip("-6", "-o", "addr", "show", "dev", "flannel-wg")).contains("fd00:10:244:1::/128");
            assertThat(a.ip("-4", "-o", "addr", "show", "dev", "flannel-wg")).isBlank();
            assertThat(a.exec("ss", "-uln")).contains("[2001:db8::1]:51820");

            assertThat(ping(a, "fd00:10:244:1::1", "fd00:10:244:2::1")).contains("1 received");
            assertThat(ping(b, "fd00:10:244:2::1", "fd00:10:244:1::1")).contains("1 received");
            WgNode.tcpTransferCrc(b, a, "fd00:10:244:1::1", 4 << 20);

            na.apply(List.of(LeaseEvent.removed(lease6("fd00:10:244:2::/64", "2001:db8::2", nb.publicKey()))));
            assertThat(na.peers()).isZero();
        }
    }

    private static Lease lease6(String subnet6, String publicIpv6, byte[] key) throws Exception {
        return new Lease(null, Ip6Net.parse(subnet6), new LeaseAttrs(null, (java.net.Inet6Address) InetAddress.getByName(publicIpv6),
                "wireguard", null, "{\"PublicKey\":\"" + Base64.getEncoder().encodeToString(key) + "\",\"Port\":51820}"), null);
    }

    static Lease lease(String subnet, String subnet6, String publicIp, String publicIpv6, byte[] key, int portV6) throws Exception {
        String k = Base64.getEncoder().encodeToString(key);
        return new Lease(Ip4Net.parse(subnet), Ip6Net.parse(subnet6), new LeaseAttrs(Ip4Net.toInet(Ip4Net.parseAddress(publicIp)),
                (java.net.Inet6Address) InetAddress.getByName(publicIpv6), "wireguard",
                "{\"PublicKey\":\"" + k + "\",\"Port\":51820}", "{\"PublicKey\":\"" + k + "\",\"Port\":" + portV6 + "}"), null);
    }

    private static String ping(WgNode n, String from, String to) {
        try {
            return n.execAnyExit("ping", "-n", "-c", "1", "-W", "2", "-I", from, to);
        } catch (Exception e) {
            return e.toString();
        }
    }
}
