package org.jflannel.backend.wireguard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.jflannel.backend.wireguard.protocol.AllowedIp;
import org.jflannel.backend.wireguard.protocol.Endpoint;
import org.jflannel.core.BackendConfig;
import org.jflannel.core.ConfigException;
import org.jflannel.core.ExternalInterface;
import org.jflannel.core.Ip4Net;
import org.jflannel.core.Ip6Net;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseAttrs;
import org.jflannel.core.NetConf;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;

/**
 * The dual-stack configuration without a kernel: which devices each Mode makes and what a bad
 * combination says (naming its field), and the peer rows a dual-stack lease gives in each mode
 * (devices, keys, endpoints, allowed IPs of both families; auto mode's endpoint choice, upstream's).
 */
class WireguardDualStackTest {
    private static final String NETS = "\"EnableIPv6\":true,\"Network\":\"10.244.0.0/16\",\"IPv6Network\":\"fd00:10:244::/56\"";
    private static final byte[] KEY = new byte[32];
    private static final byte[] KEY6 = new byte[32];

    static {
        KEY[0] = 1;
        KEY6[0] = 6;
    }

    static Stream<Arguments> layouts() {
        return Stream.of(
                // mode, conf families, ext families -> devices "name port bind routes"
                Arguments.of("separate", NETS, true, true, List.of("flannel-wg 51820 192.0.2.1 ipv4", "flannel-wg-v6 51821 2001:db8::1 ipv6")),
                Arguments.of("separate", "\"Network\":\"10.244.0.0/16\"", true, true, List.of("flannel-wg 51820 192.0.2.1 ipv4")),
                Arguments.of("separate", "\"EnableIPv4\":false,\"EnableIPv6\":true,\"IPv6Network\":\"fd00:10:244::/56\"", false, true,
                        List.of("flannel-wg-v6 51821 2001:db8::1 ipv6")),
                Arguments.of("auto", NETS, true, true, List.of("flannel-wg 51820 :: ipv4,ipv6")),
                Arguments.of("auto", "\"Network\":\"10.244.0.0/16\"", true, true, List.of("flannel-wg 51820 192.0.2.1 ipv4")),
                Arguments.of("auto", "\"EnableIPv4\":false,\"EnableIPv6\":true,\"IPv6Network\":\"fd00:10:244::/56\"", false, true,
                        List.of("flannel-wg 51820 2001:db8::1 ipv6")),
                Arguments.of("ipv4", NETS, true, true, List.of("flannel-wg 51820 192.0.2.1 ipv4,ipv6")),
                Arguments.of("ipv6", NETS, true, true, List.of("flannel-wg 51820 2001:db8::1 ipv4,ipv6")),
                Arguments.of("ipv6", "\"Network\":\"10.244.0.0/16\"", true, true, List.of("flannel-wg 51820 2001:db8::1 ipv4")));
    }

    @ParameterizedTest(name = "{0} {1}")
    @MethodSource("layouts")
    void eachModeMakesUpstreamsDevices(String mode, String nets, boolean ext4, boolean ext6, List<String> devices) throws Exception {
        NetConf conf = conf(nets, mode);
        WgLayout layout = WgLayout.of(conf, WireguardBackend.config(conf), ext(ext4, ext6));
        assertThat(layout.devices()).extracting(d -> d.name() + " " + d.port() + " " + host(d.bind()) + " "
                + (d.routesIpv4() ? "ipv4" : "") + (d.routesIpv4() && d.routesIpv6() ? "," : "") + (d.routesIpv6() ? "ipv6" : ""))
                .containsExactlyElementsOf(devices);
    }

    static Stream<Arguments> badLayouts() {
        return Stream.of(
                Arguments.of("separate", NETS, true, false, "EnableIPv6", "interface ul0 has no IPv6 address"),
                Arguments.of("auto", NETS, false, true, "EnableIPv4", "interface ul0 has no IPv4 address"),
                Arguments.of("ipv6", "\"Network\":\"10.244.0.0/16\"", true, false, "Backend.Mode", "Mode ipv6 needs an IPv6 address on interface ul0"),
                Arguments.of("ipv4", "\"EnableIPv4\":false,\"EnableIPv6\":true,\"IPv6Network\":\"fd00:10:244::/56\"", false, true,
                        "Backend.Mode", "Mode ipv4 needs an IPv4 address on interface ul0"));
    }

    @ParameterizedTest(name = "{0} {1} ext4={2} ext6={3}")
    @MethodSource("badLayouts")
    void aBadCombinationNamesItsField(String mode, String nets, boolean ext4, boolean ext6, String field, String message) throws Exception {
        NetConf conf = conf(nets, mode);
        assertThatThrownBy(() -> WgLayout.of(conf, WireguardBackend.config(conf), ext(ext4, ext6)))
                .isInstanceOfSatisfying(ConfigException.class, e -> assertThat(e.field()).isEqualTo(field))
                .hasMessageContaining(message);
    }

    @Test
    void anUnknownModeIsUpstreamsError() {
        assertThatThrownBy(() -> conf(NETS, "both"))
                .isInstanceOfSatisfying(ConfigException.class, e -> assertThat(e.field()).isEqualTo("Backend.Mode"))
                .hasMessageContaining("no valid Mode configured");
    }

    @Test
    void separateModeGivesAPeerOnEachDeviceWithItsFamilysKeyEndpointAndSubnet() throws Exception {
        WireguardPeers peers = peers("separate", true, true);
        List<WgPeer> rows = peers.rows(lease("192.0.2.2", "2001:db8::2", "{\"PublicKey\":\"" + b64(KEY6) + "\"}"));
        assertThat(rows).containsExactly(
                new WgPeer("flannel-wg", b64(KEY), Endpoint.of(InetAddress.getByName("192.0.2.2"), 51820),
                        List.of(new AllowedIp(Ip4Net.parseAddress("10.244.2.0"), 24)), 0),
                new WgPeer("flannel-wg-v6", b64(KEY6), Endpoint.of(InetAddress.getByName("2001:db8::2"), 51821),
                        List.of(v6("fd00:10:244:2::/64")), 0));
    }

    @Test
    void oneDeviceModesGiveOnePeerWithBothSubnetsAndTheModesEndpoint() throws Exception {
        Lease l = lease("192.0.2.2", "2001:db8::2", "{\"PublicKey\":\"" + b64(KEY6) + "\",\"Port\":7000}");
        List<AllowedIp> both = List.of(new AllowedIp(Ip4Net.parseAddress("10.244.2.0"), 24), v6("fd00:10:244:2::/64"));
        assertThat(peers("ipv4", true, true).rows(l)).containsExactly(
                new WgPeer("flannel-wg", b64(KEY6), Endpoint.of(InetAddress.getByName("192.0.2.2"), 51820), both, 0));
        assertThat(peers("ipv6", true, true).rows(l)).as("the v6 data's key (upstream's order), its Port").containsExactly(
                new WgPeer("flannel-wg", b64(KEY6), Endpoint.of(InetAddress.getByName("2001:db8::2"), 7000), both, 0));
    }

    static Stream<Arguments> autoChoices() {
        return Stream.of(
                Arguments.of("192.0.2.2", "2001:db8::2", "192.0.2.2:51820"),       // public IPv4 first
                Arguments.of("10.0.0.2", "2001:db8::2", "[2001:db8::2]:51820"),     // private IPv4, public IPv6
                Arguments.of("10.0.0.2", "fd00::2", "10.0.0.2:51820"),              // both private: IPv4
                Arguments.of(null, "fd00::2", "[fd00::2]:51820"),                   // the only one
                Arguments.of("172.16.0.2", null, "172.16.0.2:51820"));
    }

    @ParameterizedTest(name = "{0} {1} -> {2}")
    @MethodSource("autoChoices")
    void autoModePicksUpstreamsEndpoint(String ip4, String ip6, String endpoint) throws Exception {
        List<WgPeer> rows = peers("auto", true, true).rows(lease(ip4, ip6, "{\"PublicKey\":\"" + b64(KEY6) + "\"}"));
        assertThat(rows).hasSize(1);
        assertThat(rows.get(0).endpoint()).hasToString(endpoint);
        assertThat(rows.get(0).allowedIps()).hasSize(2);
    }

    @Test
    void autoModeWithOurIpv6UniqueLocalKeepsIpv4() throws Exception {
        NetConf conf = conf(NETS, "auto");
        WgLayout layout = WgLayout.of(conf, WireguardBackend.config(conf), ext(true, true));
        WireguardPeers peers = new WireguardPeers(Map.of(), layout, WireguardBackend.config(conf),
                (Inet4Address) InetAddress.getByName("10.0.0.1"), (Inet6Address) InetAddress.getByName("fd00::1"));
        assertThat(peers.rows(lease("10.0.0.2", "2001:db8::2", "{\"PublicKey\":\"" + b64(KEY6) + "\"}")).get(0).endpoint())
                .hasToString("10.0.0.2:51820");
    }

    @Test
    void aLeaseWithoutTheV6DataGetsNoV6PeerInSeparateMode() throws Exception {
        List<WgPeer> rows = peers("separate", true, true).rows(lease("192.0.2.2", "2001:db8::2", null));
        assertThat(rows).extracting(WgPeer::device).containsExactly("flannel-wg");
    }

    private static WireguardPeers peers(String mode, boolean ext4, boolean ext6) throws Exception {
        NetConf conf = conf(NETS, mode);
        ExternalInterface ext = ext(ext4, ext6);
        return new WireguardPeers(Map.of(), WgLayout.of(conf, WireguardBackend.config(conf), ext), WireguardBackend.config(conf),
                ext.publicIp(), ext.publicIpv6());
    }

    private static NetConf conf(String nets, String mode) throws ConfigException {
        return NetConf.parse("{" + nets + ",\"Backend\":{\"Type\":\"wireguard\",\"Mode\":\"" + mode + "\"}}", NetConf.Mode.KUBE);
    }

    private static ExternalInterface ext(boolean v4, boolean v6) throws Exception {
        return new ExternalInterface("ul0", 2, 1500, v4 ? (Inet4Address) InetAddress.getByName("192.0.2.1") : null,
                v6 ? (Inet6Address) InetAddress.getByName("2001:db8::1") : null, null, null);
    }

    private static Lease lease(String ip4, String ip6, String v6Data) throws Exception {
        return new Lease(Ip4Net.parse("10.244.2.0/24"), Ip6Net.parse("fd00:10:244:2::/64"), new LeaseAttrs(
                ip4 == null ? null : (Inet4Address) InetAddress.getByName(ip4),
                ip6 == null ? null : (Inet6Address) InetAddress.getByName(ip6), "wireguard",
                "{\"PublicKey\":\"" + b64(KEY) + "\"}", v6Data), null);
    }

    private static AllowedIp v6(String cidr) {
        Ip6Net n = Ip6Net.parse(cidr);
        return AllowedIp.v6(n.high(), n.low(), n.prefixLength());
    }

    private static String b64(byte[] k) {
        return Base64.getEncoder().encodeToString(k);
    }

    private static String host(InetAddress a) {
        return a instanceof Inet6Address ? Ip6Net.formatAddress(Ip6Net.of((Inet6Address) a, 128).high(), Ip6Net.of((Inet6Address) a, 128).low())
                : a.getHostAddress();
    }
}
