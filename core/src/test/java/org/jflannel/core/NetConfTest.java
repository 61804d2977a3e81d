package org.jflannel.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.jflannel.core.NetConf.Mode.ETCD;
import static org.jflannel.core.NetConf.Mode.KUBE;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** net-conf.json as REFERENCE §2 and upstream's pkg/subnet/config_test.go describe it. */
class NetConfTest {

    // ---- upstream config_test.go, one test each ----

    @Test
    void upstreamConfigDefaults() throws Exception {
        NetConf c = NetConf.parse("{ \"network\": \"10.3.0.0/16\" }", ETCD);
        assertThat(c.network()).hasToString("10.3.0.0/16");
        assertThat(Ip4Net.formatAddress(c.subnetMin().address())).isEqualTo("10.3.1.0");
        assertThat(Ip4Net.formatAddress(c.subnetMax().address())).isEqualTo("10.3.255.0");
        assertThat(c.subnetLen()).isEqualTo(24);
    }

    @Test
    void upstreamIPv6ConfigDefaults() throws Exception {
        NetConf c = NetConf.parse("{ \"enableIPv6\": true, \"ipv6Network\": \"fc00::/48\", \"enableIPv4\": false }", ETCD);
        assertThat(c.enableIPv4()).isFalse();
        assertThat(c.network()).isNull();
        assertThat(c.ipv6Network()).hasToString("fc00::/48");
        assertThat(v6(c.ipv6SubnetMin())).isEqualTo("fc00:0:0:1::");
        assertThat(v6(c.ipv6SubnetMax())).isEqualTo("fc00:0:0:ffff::");
        assertThat(c.ipv6SubnetLen()).isEqualTo(64);
    }

    @Test
    void upstreamConfigOverrides() throws Exception {
        NetConf c = NetConf.parse(
                "{ \"Network\": \"10.3.0.0/16\", \"SubnetMin\": \"10.3.5.0\", \"SubnetMax\": \"10.3.8.0\", \"SubnetLen\": 28 }", ETCD);
        assertThat(c.network()).hasToString("10.3.0.0/16");
        assertThat(c.subnetMin()).hasToString("10.3.5.0/28");
        assertThat(c.subnetMax()).hasToString("10.3.8.0/28");
        assertThat(c.subnetLen()).isEqualTo(28);
    }

    @Test
    void upstreamIPv6ConfigOverrides() throws Exception {
        NetConf c = NetConf.parse("{ \"EnableIPv6\": true, \"IPv6Network\": \"fc00::/48\", \"IPv6SubnetMin\": \"fc00:0:0:1::\", "
                + "\"IPv6SubnetMax\": \"fc00:0:0:f::\", \"IPv6SubnetLen\": 124, \"enableIPv4\": false }", ETCD);
        assertThat(c.ipv6Network()).hasToString("fc00::/48");
        assertThat(v6(c.ipv6SubnetMin())).isEqualTo("fc00:0:0:1::");
        assertThat(v6(c.ipv6SubnetMax())).isEqualTo("fc00:0:0:f::");
        assertThat(c.ipv6SubnetLen()).isEqualTo(124);
    }

    // ---- REFERENCE §2 examples ----

    @Test
    void referenceExampleVxlan() throws Exception {
        NetConf c = NetConf.parse("{\"Network\": \"10.244.0.0/16\", \"EnableNFTables\": false, \"Backend\": {\"Type\": \"vxlan\"}}", ETCD);
        assertThat(c.network()).hasToString("10.244.0.0/16");
        assertThat(c.enableNFTables()).isFalse();
        assertThat(c.backend()).isEqualTo(new BackendConfig.Vxlan(1, 0, 0, false, false, false));
        assertThat(c.backendDefaulted()).isFalse();
    }

    @Test
    void referenceExampleUdpWithBounds() throws Exception {
        NetConf c = NetConf.parse("{\"Network\":\"10.0.0.0/8\",\"SubnetLen\":20,\"SubnetMin\":\"10.10.0.0\","
                + "\"SubnetMax\":\"10.99.0.0\",\"Backend\":{\"Type\":\"udp\",\"Port\":7890}}", ETCD);
        assertThat(c.subnetLen()).isEqualTo(20);
        assertThat(c.subnetMin()).hasToString("10.10.0.0/20");
        assertThat(c.subnetMax()).hasToString("10.99.0.0/20");
        assertThat(c.backend()).isEqualTo(new BackendConfig.Udp(7890));
    }

    @Test
    void hostGwHasNoOptionsAndItsTypeMatchesCaseInsensitively() throws Exception {
        NetConf c = NetConf.parse("{\"Network\":\"10.244.0.0/16\",\"Backend\":{\"type\":\"Host-GW\",\"Port\":1}}", ETCD);
        assertThat(c.backend()).isEqualTo(new BackendConfig.HostGw());
        assertThat(c.backend().type()).isEqualTo("host-gw");
    }

    @Test
    void ipipHasDirectRoutingOffByDefaultAndOnWhenAsked() throws Exception {
        NetConf off = NetConf.parse("{\"Network\":\"10.244.0.0/16\",\"Backend\":{\"Type\":\"ipip\"}}", ETCD);
        assertThat(off.backend()).isEqualTo(new BackendConfig.Ipip(false));
        assertThat(off.backend().type()).isEqualTo("ipip");
        NetConf on = NetConf.parse("{\"Network\":\"10.244.0.0/16\",\"Backend\":{\"Type\":\"IPIP\",\"directrouting\":true}}", KUBE);
        assertThat(on.backend()).isEqualTo(new BackendConfig.Ipip(true));
    }

    @Test
    void allocHasNoOptions() throws Exception {
        NetConf c = NetConf.parse("{\"Network\":\"10.244.0.0/16\",\"Backend\":{\"Type\":\"alloc\",\"Port\":1}}", KUBE);
        assertThat(c.backend()).isEqualTo(new BackendConfig.Alloc());
        assertThat(c.backend().type()).isEqualTo("alloc");
    }

    @Test
    void extensionKeepsItsFourCommandsAsWrittenAndMissingOnesAreNull() throws Exception {
        NetConf c = NetConf.parse("{\"Network\":\"10.244.0.0/16\",\"Backend\":{\"Type\":\"Extension\","
                + "\"PreStartupCommand\":\"cat /etc/id\",\"postStartupCommand\":\"  ip link set $X up \","
                + "\"SubnetAddCommand\":\"ip route replace $SUBNET via $PUBLIC_IP\"}}", ETCD);
        assertThat(c.backend()).isEqualTo(new BackendConfig.Extension("cat /etc/id", "  ip link set $X up ",
                "ip route replace $SUBNET via $PUBLIC_IP", null));
        assertThat(c.backend().type()).isEqualTo("extension");
    }

    @Test
    void referenceExampleDualStack() throws Exception {
        NetConf c = NetConf.parse(
                "{\"EnableIPv6\":true,\"Network\":\"10.42.0.0/16\",\"IPv6Network\":\"2001:cafe:42::/56\",\"Backend\":{\"Type\":\"vxlan\"}}", ETCD);
        assertThat(c.enableIPv4()).isTrue();
        assertThat(c.enableIPv6()).isTrue();
        assertThat(c.subnetLen()).isEqualTo(24);
        assertThat(c.subnetMin()).hasToString("10.42.1.0/24");
        assertThat(c.subnetMax()).hasToString("10.42.255.0/24");
        assertThat(c.ipv6Network()).hasToString("2001:cafe:42::/56");
        assertThat(c.ipv6SubnetLen()).isEqualTo(64);
        assertThat(c.ipv6SubnetMin()).hasToString("2001:cafe:42:1::/64");
        assertThat(c.ipv6SubnetMax()).hasToString("2001:cafe:42:ff::/64");
    }

    // ---- defaults ----

    @ParameterizedTest(name = "{0} -> SubnetLen {1}, min {2}, max {3}")
    @CsvSource({
            "10.0.0.0/8,    24, 10.0.1.0/24,    10.255.255.0/24",
            "10.3.0.0/22,   24, 10.3.1.0/24,    10.3.3.0/24",
            "10.3.0.0/23,   25, 10.3.0.128/25,  10.3.1.128/25",
            "10.3.0.0/26,   28, 10.3.0.16/28,   10.3.0.48/28",
            "10.3.0.0/28,   30, 10.3.0.4/30,    10.3.0.12/30",
            "10.3.17.1/16,  24, 10.3.1.0/24,    10.3.255.0/24",
    })
    void ipv4SubnetLenDefaultsFollowThePrefix(String network, int len, String min, String max) throws Exception {
        NetConf c = NetConf.parse("{\"Network\":\"" + network + "\",\"Backend\":{\"Type\":\"vxlan\"}}", ETCD);
        assertThat(c.subnetLen()).isEqualTo(len);
        assertThat(c.subnetMin()).hasToString(min);
        assertThat(c.subnetMax()).hasToString(max);
    }

    @ParameterizedTest(name = "{0} -> IPv6SubnetLen {1}, min {2}, max {3}")
    @CsvSource({
            "fc00::/48,        64,  fc00:0:0:1::/64,       fc00:0:0:ffff::/64",
            "fc00::/62,        64,  fc00:0:0:1::/64,       fc00:0:0:3::/64",
            "fc00::/63,        65,  fc00::8000:0:0:0/65,   fc00:0:0:1:8000::/65",
            "fc00::/124,       126, fc00::4/126,           fc00::c/126",
            "2001:db8::1/32,   64,  2001:db8:0:1::/64,     2001:db8:ffff:ffff::/64",
    })
    void ipv6SubnetLenDefaultsFollowThePrefix(String network, int len, String min, String max) throws Exception {
        NetConf c = NetConf.parse("{\"EnableIPv4\":false,\"EnableIPv6\":true,\"IPv6Network\":\"" + network
                + "\",\"Backend\":{\"Type\":\"vxlan\"}}", ETCD);
        assertThat(c.ipv6SubnetLen()).isEqualTo(len);
        assertThat(c.ipv6SubnetMin()).hasToString(min);
        assertThat(c.ipv6SubnetMax()).hasToString(max);
    }

    @Test
    void zeroBoundsCountAsUnset() throws Exception {
        NetConf c = NetConf.parse("{\"Network\":\"10.3.0.0/16\",\"SubnetMin\":\"0.0.0.0\",\"SubnetMax\":\"0.0.0.0\","
                + "\"EnableIPv6\":true,\"IPv6Network\":\"fc00::/48\",\"IPv6SubnetMin\":\"::\"}", ETCD);
        assertThat(c.subnetMin()).hasToString("10.3.1.0/24");
        assertThat(c.subnetMax()).hasToString("10.3.255.0/24");
        assertThat(c.ipv6SubnetMin()).hasToString("fc00:0:0:1::/64");
    }

    @Test
    void nullIpv6BoundsCountAsUnsetAsUpstreamsPointersDo() throws Exception {
        NetConf c = NetConf.parse("{\"EnableIPv4\":false,\"EnableIPv6\":true,\"IPv6Network\":\"fc00::/48\","
                + "\"IPv6SubnetMin\":null,\"IPv6SubnetMax\":null}", ETCD);
        assertThat(c.ipv6SubnetMin()).hasToString("fc00:0:0:1::/64");
        assertThat(c.ipv6SubnetMax()).hasToString("fc00:0:0:ffff::/64");
    }

    @Test
    void missingBackendMeansUdpAndIsFlagged() throws Exception {
        NetConf c = NetConf.parse("{\"Network\":\"10.244.0.0/16\"}", ETCD);
        assertThat(c.backend()).isEqualTo(new BackendConfig.Udp(8285));
        assertThat(c.backendDefaulted()).isTrue();
    }

    @Test
    void keysMatchCaseInsensitivelyAlsoInsideBackend() throws Exception {
        NetConf c = NetConf.parse("{\"NETWORK\":\"10.5.0.0/16\",\"subnetlen\":20,\"enableipv6\":true,\"ipv6network\":\"fd00::/56\","
                + "\"ENABLENFTABLES\":true,\"backend\":{\"type\":\"VxLaN\",\"vni\":4096,\"port\":4789,\"mtu\":9000,"
                + "\"gbp\":true,\"LEARNING\":true,\"directrouting\":true}}", ETCD);
        assertThat(c.network()).hasToString("10.5.0.0/16");
        assertThat(c.subnetLen()).isEqualTo(20);
        assertThat(c.enableIPv6()).isTrue();
        assertThat(c.ipv6Network()).hasToString("fd00::/56");
        assertThat(c.enableNFTables()).isTrue();
        assertThat(c.backend()).isEqualTo(new BackendConfig.Vxlan(4096, 4789, 9000, true, true, true));
    }

    @Test
    void keysFoldAsInGoKelvinSignAndLongSIncluded() throws Exception {
        NetConf c = NetConf.parse("{\"Network\":\"10.5.0.0/16\",\"\u017Fubnetlen\":20,\"EnableİPv6\":true,"
                + "\"bac\u212Aend\":{\"type\":\"vxlan\"}}", ETCD);
        assertThat(c.subnetLen()).isEqualTo(20);
        assertThat(c.enableIPv6()).as("U+0130 does not fold to i").isFalse();
        assertThat(c.backend().type()).isEqualTo("vxlan");
    }

    @Test
    void laterSpellingOfAKeyWins() throws Exception {
        NetConf c = NetConf.parse("{\"Network\":\"10.1.0.0/16\",\"network\":\"10.2.0.0/16\"}", ETCD);
        assertThat(c.network()).hasToString("10.2.0.0/16");
    }

    @Test
    void unknownKeysAndNullsAreIgnored() throws Exception {
        NetConf c = NetConf.parse("{\"Network\":\"10.1.0.0/16\",\"Frobnicate\":[1,2],\"EnableIPv4\":null,\"SubnetLen\":null,"
                + "\"Backend\":{\"Type\":\"udp\",\"Port\":null,\"Extra\":{}}}", ETCD);
        assertThat(c.enableIPv4()).isTrue();
        assertThat(c.subnetLen()).isEqualTo(24);
        assertThat(c.backend()).isEqualTo(new BackendConfig.Udp(8285));
    }

    @Test
    void kubeModeKeepsAllocationFieldsAsGivenAndDoesNotCheckThem() throws Exception {
        NetConf c = NetConf.parse("{\"Network\":\"10.244.0.0/16\",\"SubnetLen\":31,\"SubnetMin\":\"192.168.0.1\","
                + "\"Backend\":{\"Type\":\"vxlan\"}}", KUBE);
        assertThat(c.network()).hasToString("10.244.0.0/16");
        assertThat(c.subnetLen()).isEqualTo(31);
        assertThat(c.subnetMin()).isNull();
        assertThat(c.subnetMax()).isNull();
        NetConf tiny = NetConf.parse("{\"Network\":\"10.0.0.0/30\",\"Backend\":{\"Type\":\"vxlan\"}}", KUBE);
        assertThat(tiny.subnetLen()).isZero();
    }

    @Test
    void hugeSubnetLenDecodesAsGoUintAndFailsTheRule() {
        ConfigException e = parseError("{\"Network\":\"10.0.0.0/8\",\"SubnetLen\":18446744073709551615}", ETCD);
        assertThat(e.field()).isEqualTo("SubnetLen");
        assertThat(e).hasMessage("net-conf.json: SubnetLen: SubnetLen must be less than /31");
    }

    @Test
    void errorsNameTheSource() {
        ConfigException e = catchThrowableOfType(ConfigException.class,
                () -> NetConf.parse("{}", ETCD, "/coreos.com/network/config"));
        assertThat(e).hasMessage("/coreos.com/network/config: Network: please define a correct Network parameter in the flannel config");
    }

    private static String v6(Ip6Net net) {
        return Ip6Net.formatAddress(net.high(), net.low());
    }

    static ConfigException parseError(String json, NetConf.Mode mode) {
        ConfigException e = catchThrowableOfType(ConfigException.class, () -> NetConf.parse(json, mode));
        assertThat(e).as("ConfigException for %s", json).isNotNull();
        return e;
    }

    @org.junit.jupiter.api.Test
    void ipsecTakesUpstreamsDefaultsAndKeepsThePskOutOfItsText() throws Exception {
        String psk = "k".repeat(96);
        NetConf c = NetConf.parse("{\"Network\":\"10.0.0.0/8\",\"Backend\":{\"Type\":\"ipsec\",\"PSK\":\"" + psk + "\"}}", ETCD);
        assertThat(c.backend()).isEqualTo(new BackendConfig.Ipsec(psk, false, "aes128gcm16-sha256-prfsha256-ecp256"));
        assertThat(c.backend().toString()).doesNotContain(psk).contains("96 characters");
        NetConf d = NetConf.parse("{\"Network\":\"10.0.0.0/8\",\"Backend\":{\"Type\":\"ipsec\",\"PSK\":\"" + psk
                + "\",\"UDPEncap\":true,\"ESPProposal\":\"aes256gcm16-modp2048\"}}", ETCD);
        assertThat(d.backend()).isEqualTo(new BackendConfig.Ipsec(psk, true, "aes256gcm16-modp2048"));
    }
}
