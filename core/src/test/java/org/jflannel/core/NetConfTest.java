package org.jflannel.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;
import static org.jflannel.core.NetConf.Mode.ETCD;
import static org.jflannel.core.NetConf.Mode.KUBE;

import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

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

    // ---- bad input: the field and the exact message ----

    static Stream<Arguments> badInputs() {
        return Stream.of(
                // IPv4 rules (upstream CheckNetworkConfig)
                bad(ETCD, "{}", "Network", "please define a correct Network parameter in the flannel config"),
                bad(ETCD, "{\"Network\":\"0.0.0.0/0\"}", "Network", "please define a correct Network parameter in the flannel config"),
                bad(KUBE, "{\"Backend\":{\"Type\":\"vxlan\"}}", "Network", "please define a correct Network parameter in the flannel config"),
                bad(ETCD, "{\"Network\":\"10.0.0.0/8\",\"SubnetLen\":31}", "SubnetLen", "SubnetLen must be less than /31"),
                bad(ETCD, "{\"Network\":\"10.0.0.0/8\",\"SubnetLen\":4294967296}", "SubnetLen", "SubnetLen must be less than /31"),
                bad(ETCD, "{\"Network\":\"10.0.0.0/16\",\"SubnetLen\":17}", "SubnetLen", "network must be able to accommodate at least four subnets"),
                bad(ETCD, "{\"Network\":\"10.0.0.0/16\",\"SubnetLen\":8}", "SubnetLen", "network must be able to accommodate at least four subnets"),
                bad(ETCD, "{\"Network\":\"10.0.0.0/29\"}", "Network", "network is too small. Minimum useful network prefix is /28"),
                bad(ETCD, "{\"Network\":\"10.0.0.1/32\"}", "Network", "network is too small. Minimum useful network prefix is /28"),
                bad(ETCD, "{\"Network\":\"10.0.0.0/16\",\"SubnetMin\":\"10.1.0.0\"}", "SubnetMin", "SubnetMin is not in the range of the Network"),
                bad(ETCD, "{\"Network\":\"10.0.0.0/16\",\"SubnetMax\":\"9.255.255.0\"}", "SubnetMax", "SubnetMax is not in the range of the Network"),
                bad(ETCD, "{\"Network\":\"10.0.0.0/16\",\"SubnetMin\":\"10.0.1.5\"}", "SubnetMin", "SubnetMin is not on a SubnetLen boundary: 10.0.1.5"),
                bad(ETCD, "{\"Network\":\"10.0.0.0/16\",\"SubnetLen\":20,\"SubnetMax\":\"10.0.17.0\"}", "SubnetMax", "SubnetMax is not on a SubnetLen boundary: 10.0.17.0"),
                // upstream checks both ranges before either alignment
                bad(ETCD, "{\"Network\":\"10.0.0.0/16\",\"SubnetMin\":\"10.0.1.5\",\"SubnetMax\":\"10.9.0.0\"}", "SubnetMax", "SubnetMax is not in the range of the Network"),
                bad(ETCD, "{\"Network\":\"bogus\"}", "Network", "invalid CIDR address: bogus"),
                bad(ETCD, "{\"Network\":\"10.0.0.0\"}", "Network", "invalid CIDR address: 10.0.0.0"),
                bad(ETCD, "{\"Network\":\"10.0.0.0/33\"}", "Network", "invalid CIDR address: 10.0.0.0/33"),
                bad(ETCD, "{\"Network\":\"010.0.0.0/8\"}", "Network", "invalid CIDR address: 010.0.0.0/8"),
                bad(ETCD, "{\"Network\":\"fc00::/48\"}", "Network", "invalid IPv4 CIDR format"),
                bad(KUBE, "{\"Network\":\"10.0.0.0/8 \"}", "Network", "invalid CIDR address: 10.0.0.0/8 "),
                bad(ETCD, "{\"Network\":\"10.0.0.0/16\",\"SubnetMin\":\"ten\"}", "SubnetMin", "invalid IPv4 address: ten"),
                // IPv6 rules
                bad(ETCD, "{\"EnableIPv6\":true,\"Network\":\"10.0.0.0/16\"}", "IPv6Network", "please define a correct IPv6Network parameter in the flannel config"),
                bad(KUBE, "{\"EnableIPv4\":false,\"EnableIPv6\":true}", "IPv6Network", "please define a correct IPv6Network parameter in the flannel config"),
                bad(ETCD, "{\"EnableIPv4\":false,\"EnableIPv6\":true,\"IPv6Network\":\"::/0\"}", "IPv6Network", "please define a correct IPv6Network parameter in the flannel config"),
                bad(ETCD, v6("\"IPv6SubnetLen\":127"), "IPv6SubnetLen", "SubnetLen must be less than /127"),
                bad(ETCD, v6("\"IPv6SubnetLen\":49"), "IPv6SubnetLen", "network must be able to accommodate at least four subnets"),
                bad(ETCD, "{\"EnableIPv4\":false,\"EnableIPv6\":true,\"IPv6Network\":\"fc00::/125\"}", "IPv6Network", "IPv6Network is too small. Minimum useful network prefix is /124"),
                bad(ETCD, v6("\"IPv6SubnetMin\":\"fc01::\""), "IPv6SubnetMin", "IPv6SubnetMin is not in the range of the IPv6Network"),
                bad(ETCD, v6("\"IPv6SubnetMax\":\"fb00::\""), "IPv6SubnetMax", "IPv6SubnetMax is not in the range of the IPv6Network"),
                bad(ETCD, v6("\"IPv6SubnetMin\":\"fc00:0:0:1::1\""), "IPv6SubnetMin", "IPv6SubnetMin is not on a SubnetLen boundary: fc00:0:0:1::1"),
                bad(ETCD, v6("\"IPv6SubnetMax\":\"fc00:0:0:2:8000::\""), "IPv6SubnetMax", "IPv6SubnetMax is not on a SubnetLen boundary: fc00:0:0:2:8000::"),
                bad(ETCD, v6("\"IPv6SubnetMin\":\"fc00:0:0:1::1\",\"IPv6SubnetMax\":\"fd00::\""), "IPv6SubnetMax", "IPv6SubnetMax is not in the range of the IPv6Network"),
                bad(ETCD, "{\"EnableIPv4\":false,\"EnableIPv6\":true,\"IPv6Network\":\"fc00::\"}", "IPv6Network", "invalid CIDR address: fc00::"),
                bad(ETCD, "{\"EnableIPv4\":false,\"EnableIPv6\":true,\"IPv6Network\":\"10.0.0.0/8\"}", "IPv6Network", "invalid CIDR address: 10.0.0.0/8"),
                bad(ETCD, "{\"EnableIPv4\":false,\"EnableIPv6\":true,\"IPv6Network\":\"localhost/64\"}", "IPv6Network", "invalid CIDR address: localhost/64"),
                bad(ETCD, "{\"EnableIPv4\":false,\"EnableIPv6\":true,\"IPv6Network\":\"fe80::%eth0/64\"}", "IPv6Network", "invalid CIDR address: fe80::%eth0/64"),
                bad(ETCD, v6("\"IPv6SubnetMin\":\"zz::\""), "IPv6SubnetMin", "invalid IPv6 address: zz::"),
                // no stack at all
                bad(ETCD, "{\"EnableIPv4\":false}", "EnableIPv4", "none defined stack"),
                bad(KUBE, "{\"EnableIPv4\":false,\"EnableIPv6\":false,\"Network\":\"10.0.0.0/8\"}", "EnableIPv4", "none defined stack"),
                // wrong JSON types
                bad(ETCD, "{\"Network\":10}", "Network", "expected a string, got 10"),
                bad(ETCD, "{\"Network\":[\"10.0.0.0/8\"]}", "Network", "expected a string, got [\"10.0.0.0/8\"]"),
                bad(ETCD, "{\"Network\":\"10.0.0.0/8\",\"SubnetLen\":\"24\"}", "SubnetLen", "expected an unsigned integer, got \"24\""),
                bad(ETCD, "{\"Network\":\"10.0.0.0/8\",\"SubnetLen\":-1}", "SubnetLen", "expected an unsigned integer, got -1"),
                bad(ETCD, "{\"Network\":\"10.0.0.0/8\",\"SubnetLen\":24.5}", "SubnetLen", "expected an unsigned integer, got 24.5"),
                bad(ETCD, "{\"Network\":\"10.0.0.0/8\",\"SubnetLen\":18446744073709551616}", "SubnetLen", "expected an unsigned integer, got 18446744073709551616"),
                bad(ETCD, "{\"Network\":\"10.0.0.0/8\",\"SubnetMin\":167837696}", "SubnetMin", "expected a string, got 167837696"),
                bad(ETCD, "{\"Network\":\"10.0.0.0/8\",\"EnableIPv6\":\"true\"}", "EnableIPv6", "expected true or false, got \"true\""),
                bad(ETCD, "{\"Network\":\"10.0.0.0/8\",\"EnableIPv4\":1}", "EnableIPv4", "expected true or false, got 1"),
                bad(ETCD, "{\"Network\":\"10.0.0.0/8\",\"EnableNFTables\":\"no\"}", "EnableNFTables", "expected true or false, got \"no\""),
                bad(ETCD, "{\"Network\":\"10.0.0.0/8\",\"IPv6SubnetLen\":true}", "IPv6SubnetLen", "expected an unsigned integer, got true"),
                bad(ETCD, "{\"Network\":\"10.0.0.0/8\",\"Backend\":\"vxlan\"}", "Backend", "expected an object, got \"vxlan\""),
                bad(ETCD, "{\"Network\":\"10.0.0.0/8\",\"Backend\":[]}", "Backend", "expected an object, got []"),
                bad(ETCD, "{\"Network\":\"10.0.0.0/8\",\"Backend\":{\"Type\":1}}", "Backend.Type", "expected a string, got 1"),
                bad(ETCD, "{\"Network\":\"10.0.0.0/8\",\"Backend\":{\"Type\":\"vxlan\",\"VNI\":\"x\"}}", "Backend.VNI", "expected 0..16777215, got \"x\""),
                bad(ETCD, "{\"Network\":\"10.0.0.0/8\",\"Backend\":{\"Type\":\"vxlan\",\"VNI\":16777216}}", "Backend.VNI", "expected 0..16777215, got 16777216"),
                bad(ETCD, "{\"Network\":\"10.0.0.0/8\",\"Backend\":{\"Type\":\"vxlan\",\"Port\":65536}}", "Backend.Port", "expected 0..65535, got 65536"),
                bad(ETCD, "{\"Network\":\"10.0.0.0/8\",\"Backend\":{\"Type\":\"vxlan\",\"MTU\":-1}}", "Backend.MTU", "expected 0..65535, got -1"),
                bad(ETCD, "{\"Network\":\"10.0.0.0/8\",\"Backend\":{\"Type\":\"vxlan\",\"GBP\":\"yes\"}}", "Backend.GBP", "expected true or false, got \"yes\""),
                bad(ETCD, "{\"Network\":\"10.0.0.0/8\",\"Backend\":{\"Type\":\"vxlan\",\"DirectRouting\":0}}", "Backend.DirectRouting", "expected true or false, got 0"),
                bad(ETCD, "{\"Network\":\"10.0.0.0/8\",\"Backend\":{\"Type\":\"udp\",\"Port\":0}}", "Backend.Port", "expected 1..65535, got 0"),
                // backend type
                bad(ETCD, "{\"Network\":\"10.0.0.0/8\",\"Backend\":{\"Type\":\"host-gw\"}}", "Backend.Type", "backend host-gw is not supported; supported: vxlan, udp"),
                bad(KUBE, "{\"Network\":\"10.0.0.0/8\",\"Backend\":{\"Type\":\"wireguard\"}}", "Backend.Type", "backend wireguard is not supported; supported: vxlan, udp"),
                bad(ETCD, "{\"Network\":\"10.0.0.0/8\",\"Backend\":{}}", "Backend.Type", "unknown backend type: "),
                bad(ETCD, "{\"Network\":\"10.0.0.0/8\",\"Backend\":null}", "Backend.Type", "unknown backend type: "),
                bad(ETCD, "{\"Network\":\"10.0.0.0/8\",\"Backend\":{\"Type\":\"\"}}", "Backend.Type", "unknown backend type: "),
                bad(ETCD, "{\"Network\":\"10.0.0.0/8\",\"Backend\":{\"Port\":8285}}", "Backend.Type", "unknown backend type: "));
    }

    @ParameterizedTest(name = "[{index}] {0} {1} -> {2}")
    @MethodSource("badInputs")
    void badInputNamesTheFieldAndUpstreamsMessage(NetConf.Mode mode, String json, String field, String message) {
        ConfigException e = parseError(json, mode);
        assertThat(e.field()).isEqualTo(field);
        assertThat(e).hasMessage("net-conf.json: " + field + ": " + message);
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @CsvSource(delimiter = '|', value = {
            "''                          | expected a JSON object, got nothing",
            "'   '                       | expected a JSON object, got nothing",
            "[]                          | expected a JSON object, got []",
            "'\"10.0.0.0/8\"'            | expected a JSON object, got \"10.0.0.0/8\"",
            "null                        | expected a JSON object, got null",
    })
    void aTopLevelThatIsNoObjectIsRejected(String json, String message) {
        ConfigException e = parseError(json, ETCD);
        assertThat(e.field()).isEmpty();
        assertThat(e).hasMessage("net-conf.json: " + message);
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @CsvSource(delimiter = '|', value = {
            "{",
            "{\"Network\":}",
            "{\"Network\":\"10.0.0.0/8\"} {}",
            "{'Network':'10.0.0.0/8'}",
    })
    void malformedJsonIsAConfigException(String json) {
        ConfigException e = parseError(json, KUBE);
        assertThat(e.field()).isEmpty();
        assertThat(e.getMessage()).startsWith("net-conf.json: invalid JSON: ");
    }

    private static Arguments bad(NetConf.Mode mode, String json, String field, String message) {
        return Arguments.of(mode, json, field, message);
    }

    /** An IPv6-only etcd config on fc00::/48 plus {@code extra}. */
    private static String v6(String extra) {
        return "{\"EnableIPv4\":false,\"EnableIPv6\":true,\"IPv6Network\":\"fc00::/48\"," + extra + "}";
    }

    private static String v6(Ip6Net net) {
        return Ip6Net.formatAddress(net.high(), net.low());
    }

    private static ConfigException parseError(String json, NetConf.Mode mode) {
        ConfigException e = catchThrowableOfType(ConfigException.class, () -> NetConf.parse(json, mode));
        assertThat(e).as("ConfigException for %s", json).isNotNull();
        return e;
    }
}
