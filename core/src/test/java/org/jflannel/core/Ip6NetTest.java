package org.jflannel.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.Inet6Address;
import java.net.InetAddress;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class Ip6NetTest {

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource({
            "fc00::/48,                         fc00::/48",
            "fc00::1/64,                        fc00::/64",
            "2001:cafe:42::/56,                 2001:cafe:42::/56",
            "2001:CAFE:0042:0000::/56,          2001:cafe:42::/56",
            "2001:db8:0:0:1:0:0:1/128,          2001:db8::1:0:0:1/128",
            "2001:db8:0:1:1:1:1:1/128,          2001:db8:0:1:1:1:1:1/128",
            "2001:0:0:1:0:0:0:1/128,            2001:0:0:1::1/128",
            "::/0,                              ::/0",
            "::1/128,                           ::1/128",
            "1::/16,                            1::/16",
            "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128, ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128",
            "1:2:3:4:5:6:7::/128,               1:2:3:4:5:6:7:0/128",
            "::2:3:4:5:6:7:8/128,               0:2:3:4:5:6:7:8/128",
            "::ffff:10.1.2.3/128,               ::ffff:10.1.2.3/128",
            "64:ff9b::192.0.2.33/128,           64:ff9b::c000:221/128",
            "1:2:3:4:5:6:1.2.3.4/128,           1:2:3:4:5:6:102:304/128",
            "fc00:0:0:1::/0064,                 fc00:0:0:1::/64",
    })
    void parseClearsHostBitsAndFormatsAsGo(String text, String expected) {
        assertThat(Ip6Net.parse(text)).hasToString(expected);
    }

    @ParameterizedTest(name = "[{index}] \"{0}\"")
    @ValueSource(strings = {"", "fc00::", "fc00::/", "fc00::/129", "fc00::/-1", "fc00::/6 4", "fc00::/64/64",
            ":/0", ":::/0", "1:::2/64", "1::2::3/64", ":1::/64", "1::2:/64", "1:2:3:4:5:6:7:8::/64", "::1:2:3:4:5:6:7:8/64",
            "1:2:3:4:5:6:7/64", "1:2:3:4:5:6:7:8:9/64", "12345::/64", "g::/64", "fe80::1%eth0/64", "[fc00::]/64",
            "10.0.0.0/8", "::ffff:1.2.3/128", "::ffff:1.2.3.256/128", "::ffff:01.2.3.4/128", "1.2.3.4::/64",
            "1:2:3:4:5:6:7:1.2.3.4/128", "::1.2.3.4:5/128", "localhost/64", ".::/64", "::./64", "..::/64", " ::/0", "::/0 ",
            "fc00::/٦٤", "ｆc00::/64"})
    void badCidrIsRejectedWithGosText(String text) {
        assertThatThrownBy(() -> Ip6Net.parse(text))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("invalid CIDR address: " + text);
    }

    @ParameterizedTest(name = "[{index}] \"{0}\"")
    @ValueSource(strings = {"", ":", "::g", "1.2.3.4", "fe80::1%1", "[::1]", "a.b::", "example.com", "0:0:0:0:0:0:0:0:0"})
    void badAddressIsRejectedWithTheText(String text) {
        assertThatThrownBy(() -> Ip6Net.parseAddress(text))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("invalid IPv6 address: " + text);
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"::", "::1", "1::", "2001:db8::ff00:42:8329", "fe80::1ff:fe23:4567:890a", "1::1:1:0:0:1",
            "0:1::1:0:0"})
    void formatMatchesTheJdkOnNonMappedAddressesAfterCompression(String text) throws Exception {
        long[] a = Ip6Net.parseAddress(text);
        byte[] jdk = ((Inet6Address) InetAddress.getByName(text)).getAddress();
        assertThat(Ip6Net.toInet(a[0], a[1]).getAddress()).isEqualTo(jdk);
        assertThat(Ip6Net.formatAddress(a[0], a[1])).isEqualTo(text);
    }

    @Test
    void rfc5952CompressesTheLongestRunAndTheFirstOfEqualRuns() {
        assertThat(addr("1:0:0:2:0:0:0:3")).isEqualTo("1:0:0:2::3");
        assertThat(addr("1:0:0:2:3:0:0:4")).isEqualTo("1::2:3:0:0:4");
        assertThat(addr("1:0:2:3:4:5:6:7")).isEqualTo("1:0:2:3:4:5:6:7");
        assertThat(addr("0:0:0:0:0:0:0:1")).isEqualTo("::1");
    }

    @Test
    void constructorRejectsBadPrefixLengths() {
        assertThatThrownBy(() -> new Ip6Net(0, 0, 129)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("IPv6 prefix length must be 0..128, got 129");
    }

    @ParameterizedTest(name = "{0} next -> {1}")
    @CsvSource({
            "fc00::/64,                      fc00:0:0:1::/64",
            "fc00:0:0:ffff::/64,             fc00:0:1::/64",
            "fc00:0:0:0:ffff:ffff:ffff:ffff/128, fc00:0:0:1::/128",
            "fc00::/7,                       fe00::/7",
            "ffff:ffff:ffff:ffff::/64,       ::/64",
    })
    void nextCarriesAcrossTheHalves(String net, String next) {
        assertThat(Ip6Net.parse(net).next()).hasToString(next);
    }

    @Test
    void containsAndOverlaps() {
        Ip6Net net = Ip6Net.parse("2001:cafe:42::/56");
        long[] inside = Ip6Net.parseAddress("2001:cafe:42:ff:ffff::1");
        long[] outside = Ip6Net.parseAddress("2001:cafe:42:100::");
        assertThat(net.contains(inside[0], inside[1])).isTrue();
        assertThat(net.contains(outside[0], outside[1])).isFalse();
        assertThat(net.contains(Ip6Net.parse("2001:cafe:42:7::/64"))).isTrue();
        assertThat(net.contains(Ip6Net.parse("2001:cafe::/32"))).isFalse();
        assertThat(net.overlaps(Ip6Net.parse("2001:cafe::/32"))).isTrue();
        assertThat(Ip6Net.parse("2001:cafe::/32").overlaps(net)).isTrue();
        assertThat(net.overlaps(Ip6Net.parse("2001:cafe:43::/56"))).isFalse();
        assertThat(Ip6Net.parse("fc00::1:0:0:1/127").overlaps(Ip6Net.parse("fc00::1:0:0:0/127"))).isTrue();
        assertThat(Ip6Net.parse("fc00::1:0:0:2/127").overlaps(Ip6Net.parse("fc00::1:0:0:0/127"))).isFalse();
    }

    @ParameterizedTest(name = "{0} subnet /{1} #{2} = {3}")
    @CsvSource({
            "fc00::/48,          64,  1,      fc00:0:0:1::/64",
            "fc00::/48,          64,  65535,  fc00:0:0:ffff::/64",
            "2001:cafe:42::/56,  64,  255,    2001:cafe:42:ff::/64",
            "fc00::/120,         124, 15,     fc00::f0/124",
            "fc00::/60,          68,  17,     fc00:0:0:1:1000::/68",
            "fc00::/32,          96,  4294967297, fc00::1:0:1:0:0/96",
    })
    void subnetAndIndexOfAreInverse(String net, int len, long index, String subnet) {
        Ip6Net n = Ip6Net.parse(net);
        assertThat(n.subnet(len, index)).hasToString(subnet);
        assertThat(n.indexOf(Ip6Net.parse(subnet))).isEqualTo(index);
    }

    @Test
    void subnetOutOfRangeIsRejected() {
        Ip6Net n = Ip6Net.parse("fc00::/48");
        assertThatThrownBy(() -> n.subnet(64, 65536)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("subnet index 65536 out of range in fc00::/48");
        assertThatThrownBy(() -> n.subnet(32, 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("subnet length 32 does not fit in fc00::/48");
        assertThatThrownBy(() -> n.indexOf(Ip6Net.parse("fc01::/64"))).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("fc01::/64 is not inside fc00::/48");
    }

    @Test
    void orderIsUnsigned() {
        assertThat(Ip6Net.parse("fc00::/64")).isGreaterThan(Ip6Net.parse("2001::/64"));
        assertThat(Ip6Net.parse("::8000:0:0:0/128")).isGreaterThan(Ip6Net.parse("::1/128"));
    }

    @Test
    void inetConversionRoundTrips() throws Exception {
        Ip6Net n = Ip6Net.of((Inet6Address) InetAddress.getByName("2001:db8::1"), 64);
        assertThat(n).hasToString("2001:db8::/64");
        assertThat(n.inetAddress().getHostAddress()).isEqualTo("2001:db8:0:0:0:0:0:0");
    }

    private static String addr(String text) {
        long[] a = Ip6Net.parseAddress(text);
        return Ip6Net.formatAddress(a[0], a[1]);
    }
}
