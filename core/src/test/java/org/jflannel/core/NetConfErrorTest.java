package org.jflannel.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.jflannel.core.NetConf.Mode.ETCD;
import static org.jflannel.core.NetConf.Mode.KUBE;
import static org.jflannel.core.NetConfTest.parseError;

import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.MethodSource;

/** Bad net-conf.json: each case names the field and carries upstream's message (REFERENCE §2). */
class NetConfErrorTest {

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
                bad(ETCD, "{\"Network\":\"fc00::/129\"}", "Network", "invalid CIDR address: fc00::/129"),
                // a JSON null reaches upstream's UnmarshalJSON, which cannot parse "null"
                bad(ETCD, "{\"Network\":null}", "Network", "invalid CIDR address: null"),
                bad(KUBE, "{\"EnableIPv4\":false,\"EnableIPv6\":true,\"IPv6Network\":\"fc00::/48\",\"Network\":null}", "Network", "invalid CIDR address: null"),
                bad(ETCD, "{\"Network\":\"10.0.0.0/8\",\"IPv6Network\":null}", "IPv6Network", "invalid CIDR address: null"),
                bad(ETCD, "{\"Network\":\"10.0.0.0/8\",\"SubnetMax\":null}", "SubnetMax", "invalid IPv4 address: null"),
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
                bad(ETCD, "{\"Network\":\"10.0.0.0/8\",\"Backend\":{\"Type\":\"extension\",\"SubnetAddCommand\":[\"ip\",\"route\"]}}", "Backend.SubnetAddCommand", "expected a string, got [\"ip\",\"route\"]"),
                bad(ETCD, "{\"Network\":\"10.0.0.0/8\",\"Backend\":{\"Type\":\"extension\",\"PreStartupCommand\":1}}", "Backend.PreStartupCommand", "expected a string, got 1"),
                // ipsec (upstream's text for a short PSK; Go's len counts bytes)
                bad(ETCD, "{\"Network\":\"10.0.0.0/8\",\"Backend\":{\"Type\":\"ipsec\"}}", "Backend.PSK", "config error, password is too short (0 characters; at least 96 needed)"),
                bad(ETCD, "{\"Network\":\"10.0.0.0/8\",\"Backend\":{\"Type\":\"ipsec\",\"PSK\":\"" + "p".repeat(95) + "\"}}", "Backend.PSK", "config error, password is too short (95 characters; at least 96 needed)"),
                bad(ETCD, "{\"Network\":\"10.0.0.0/8\",\"Backend\":{\"Type\":\"ipsec\",\"PSK\":96}}", "Backend.PSK", "error decoding backend config: json: cannot unmarshal number into Go struct field .PSK of type string"),
                bad(ETCD, "{\"Network\":\"10.0.0.0/8\",\"Backend\":{\"Type\":\"ipsec\",\"PSK\":\"" + "p".repeat(96) + "\",\"UDPEncap\":\"yes\"}}", "Backend.UDPEncap", "expected true or false, got \"yes\""),
                // backend type
                bad(ETCD, "{\"Network\":\"10.0.0.0/8\",\"Backend\":{\"Type\":\"tencentvpc\"}}", "Backend.Type", "backend tencentvpc is not supported; supported: vxlan, udp, host-gw, wireguard, alloc, extension, ipip, ipsec"),
                bad(ETCD, "{\"Network\":\"10.0.0.0/8\",\"Backend\":{\"Type\":\"ipip\",\"DirectRouting\":\"yes\"}}", "Backend.DirectRouting", "expected true or false, got \"yes\""),
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
}
