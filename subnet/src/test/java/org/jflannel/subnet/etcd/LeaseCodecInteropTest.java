package org.jflannel.subnet.etcd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetAddress;
import java.util.regex.Matcher;
import org.jflannel.core.ConfigException;
import org.jflannel.core.Ip4Net;
import org.jflannel.core.Ip6Net;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseAttrs;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** etcd keys and values exactly as upstream flanneld writes them (REFERENCE §5.2), both ways. */
class LeaseCodecInteropTest {
    private static final String PREFIX = "/coreos.com/network/subnets/";

    // what upstream v0.28 stores (json.Marshal of lease.LeaseAttrs)
    private static final String UPSTREAM_V4 =
            "{\"PublicIP\":\"192.168.64.3\",\"PublicIPv6\":null,\"BackendType\":\"vxlan\",\"BackendData\":{\"VNI\":1,\"VtepMAC\":\"c6:d2:32:6e:8b:10\"}}";
    private static final String UPSTREAM_DUAL =
            "{\"PublicIP\":\"192.168.64.4\",\"PublicIPv6\":\"fd00:64::4\",\"BackendType\":\"vxlan\","
                    + "\"BackendData\":{\"VNI\":1,\"VtepMAC\":\"0e:11:22:33:44:55\"},"
                    + "\"BackendV6Data\":{\"VNI\":1,\"VtepMAC\":\"0e:11:22:33:44:66\"}}";
    // upstream's udp backend writes no BackendType or BackendData at all (omitempty)
    private static final String UPSTREAM_UDP = "{\"PublicIP\":\"10.0.0.7\",\"PublicIPv6\":null}";

    // upstream's host-gw: BackendType only, no backend data (omitempty), PublicIPv6 with IPv6
    private static final String UPSTREAM_HOSTGW = "{\"PublicIP\":\"192.0.2.50\",\"PublicIPv6\":null,\"BackendType\":\"host-gw\"}";
    private static final String UPSTREAM_HOSTGW_DUAL =
            "{\"PublicIP\":\"192.0.2.51\",\"PublicIPv6\":\"2001:db8:1::51\",\"BackendType\":\"host-gw\"}";

    @Test
    void upstreamHostGwLeasesParseAndWriteBackByteForByte() throws Exception {
        Lease v4 = EtcdLeases.decode(PREFIX + "10.244.50.0-24", UPSTREAM_HOSTGW, null);
        assertThat(v4.attrs()).isEqualTo(new LeaseAttrs(ip4("192.0.2.50"), null, "host-gw", null, null));
        Lease dual = EtcdLeases.decode(PREFIX + "10.244.51.0-24&2001:db8:42:51::-64", UPSTREAM_HOSTGW_DUAL, null);
        assertThat(dual.ipv6Subnet()).isEqualTo(Ip6Net.parse("2001:db8:42:51::/64"));
        assertThat(dual.attrs().publicIpv6()).isEqualTo(InetAddress.getByName("2001:db8:1::51"));
        assertThat(dual.attrs().backendData()).isNull();
        assertThat(dual.attrs().backendV6Data()).isNull();
        for (String upstream : new String[] {UPSTREAM_HOSTGW, UPSTREAM_HOSTGW_DUAL}) {
            assertThat(LeaseValueCodec.format(LeaseValueCodec.parse("k", upstream))).isEqualTo(upstream);
        }
    }

    @Test
    void upstreamIpv4LeaseParses() throws Exception {
        Lease l = EtcdLeases.decode(PREFIX + "10.5.34.0-24", UPSTREAM_V4, null);
        assertThat(l.subnet()).isEqualTo(Ip4Net.parse("10.5.34.0/24"));
        assertThat(l.ipv6Subnet()).isNull();
        assertThat(l.attrs()).isEqualTo(new LeaseAttrs(ip4("192.168.64.3"), null, "vxlan",
                "{\"VNI\":1,\"VtepMAC\":\"c6:d2:32:6e:8b:10\"}", null));
    }

    @Test
    void upstreamDualStackLeaseParses() throws Exception {
        Lease l = EtcdLeases.decode(PREFIX + "10.5.35.0-24&fc00::-64", UPSTREAM_DUAL, null);
        assertThat(l.subnet()).isEqualTo(Ip4Net.parse("10.5.35.0/24"));
        assertThat(l.ipv6Subnet()).isEqualTo(Ip6Net.parse("fc00::/64"));
        assertThat(l.attrs().publicIpv6()).isEqualTo(InetAddress.getByName("fd00:64::4"));
        assertThat(l.attrs().backendV6Data()).isEqualTo("{\"VNI\":1,\"VtepMAC\":\"0e:11:22:33:44:66\"}");
    }

    @Test
    void upstreamUdpLeaseWithoutBackendFieldsParses() throws Exception {
        Lease l = EtcdLeases.decode(PREFIX + "10.5.36.0-24", UPSTREAM_UDP, null);
        assertThat(l.attrs()).isEqualTo(new LeaseAttrs(ip4("10.0.0.7"), null, "", null, null));
    }

    @Test
    void whatWeWriteIsByteIdenticalToUpstream() throws Exception {
        for (String upstream : new String[] {UPSTREAM_V4, UPSTREAM_DUAL, UPSTREAM_UDP}) {
            LeaseAttrs a = LeaseValueCodec.parse("k", upstream);
            assertThat(LeaseValueCodec.format(a)).isEqualTo(upstream);
        }
    }

    @Test
    void backendDataIsCompactedAndHtmlEscapedAsGoDoes() {
        LeaseAttrs a = new LeaseAttrs(ip4("10.0.0.1"), null, "extension",
                "{ \"Cmd\" : \"a<b && c>d\",\n \"N\": [1, 2] }", null);
        assertThat(LeaseValueCodec.format(a)).isEqualTo("{\"PublicIP\":\"10.0.0.1\",\"PublicIPv6\":null,"
                + "\"BackendType\":\"extension\",\"BackendData\":{\"Cmd\":\"a\\u003cb \\u0026\\u0026 c\\u003ed\",\"N\":[1,2]}}");
    }

    @Test
    void ourKeysAndValuesFollowUpstreamFormatRules() throws Exception {
        LeaseAttrs ours = new LeaseAttrs(ip4("192.0.2.1"), (java.net.Inet6Address) InetAddress.getByName("2001:db8::1"),
                "vxlan", "{\"VNI\":1,\"VtepMAC\":\"0e:00:00:00:00:01\"}", "{\"VNI\":1,\"VtepMAC\":\"0e:00:00:00:00:02\"}");
        String key = PREFIX + LeaseKeyCodec.format(Ip4Net.parse("10.244.3.0/24"), Ip6Net.parse("2001:cafe:42:3::/64"));
        Matcher m = LeaseKeyCodec.KEY.matcher(key);
        assertThat(m.find()).isTrue();
        assertThat(m.group(1)).isEqualTo("10.244.3.0");
        assertThat(m.group(2)).isEqualTo("24");
        assertThat(m.group(3)).isEqualTo("2001:cafe:42:3::");
        assertThat(m.group(4)).isEqualTo("64");
        String value = LeaseValueCodec.format(ours);
        // upstream's field names, in upstream's declaration order
        assertThat(value).startsWith("{\"PublicIP\":\"192.0.2.1\",\"PublicIPv6\":\"2001:db8::1\",\"BackendType\":\"vxlan\","
                + "\"BackendData\":{").contains(",\"BackendV6Data\":{");
        assertThat(LeaseValueCodec.parse(key, value)).isEqualTo(ours);
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "/coreos.com/network/subnets/10.5.34.0-24            | 10.5.34.0/24 |",
        "/coreos.com/network/subnets/10.5.34.0-024           | 10.5.34.0/24 |",
        "/coreos.com/network/subnets/10.5.34.0-24&fc00::-64  | 10.5.34.0/24 | fc00::/64",
        "/other/prefix/subnets/172.16.0.0-16                 | 172.16.0.0/16 |",
    })
    void keysParseAsUpstreamParsesThem(String key, String v4, String v6) throws Exception {
        LeaseKeyCodec.Subnets s = LeaseKeyCodec.parse(key);
        assertThat(s.ipv4()).isEqualTo(Ip4Net.parse(v4));
        assertThat(s.ipv6()).isEqualTo(v6 == null ? null : Ip6Net.parse(v6));
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource(delimiter = '|', value = {
        "/coreos.com/network/subnets",
        "/coreos.com/network/subnets/10.5.34.0-32",
        "/coreos.com/network/subnets/10.5.34.0",
        "/coreos.com/network/subnets/10.5.340.0-24",
        "/coreos.com/network/subnets/010.5.34.0-24",
        "/coreos.com/network/subnets/10.5.34.0-24&FC00::-64",
        "/coreos.com/network/subnets/10.5.34.0-24&fc00::-128",
    })
    void keysUpstreamSkipsAreRejectedNamingTheKey(String key) {
        assertThatThrownBy(() -> LeaseKeyCodec.parse(key)).isInstanceOf(ConfigException.class)
                .hasMessageContaining(key).extracting(e -> ((ConfigException) e).field()).isEqualTo("key");
    }

    @ParameterizedTest(name = "[{index}] {0}: {1}")
    @CsvSource(delimiter = '|', value = {
        "PublicIP    | {\"PublicIP\":\"300.1.1.1\"}",
        "PublicIP    | {\"PublicIP\":7}",
        "PublicIP    | {\"PublicIP\":null}",
        "PublicIP    | {\"PublicIP\":\"fd00::1\"}",
        "PublicIPv6  | {\"PublicIP\":\"10.0.0.1\",\"PublicIPv6\":\"10.0.0.1\"}",
        "PublicIPv6  | {\"PublicIP\":\"10.0.0.1\",\"PublicIPv6\":[]}",
        "BackendType | {\"PublicIP\":\"10.0.0.1\",\"BackendType\":1}",
        "value       | [1,2]",
        "value       | {\"PublicIP\":\"10.0.0.1\"",
        "value       | {\"PublicIP\":\"10.0.0.1\"} x",
        "value       | ''",
    })
    void malformedValuesNameTheKeyAndField(String field, String json) {
        assertThatThrownBy(() -> LeaseValueCodec.parse("/p/subnets/10.1.0.0-24", json))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("/p/subnets/10.1.0.0-24").hasMessageContaining(field)
                .extracting(e -> ((ConfigException) e).field()).isEqualTo(field);
    }

    @Test
    void fieldNamesMatchCaseInsensitivelyAndTheLastDuplicateWinsAsInGo() throws Exception {
        LeaseAttrs a = LeaseValueCodec.parse("k",
                "{\"publicip\":\"10.0.0.1\",\"PUBLICIP\":\"10.0.0.2\",\"backendtype\":\"udp\",\"Extra\":{\"x\":[1]}}");
        assertThat(a).isEqualTo(new LeaseAttrs(ip4("10.0.0.2"), null, "udp", null, null));
    }

    private static java.net.Inet4Address ip4(String s) {
        return Ip4Net.toInet(Ip4Net.parseAddress(s));
    }
}
