package org.jflannel.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class Ip4NetTest {

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource({
            "10.244.0.0/16,   10.244.0.0/16",
            "10.1.17.1/24,    10.1.17.0/24",
            "0.0.0.0/0,       0.0.0.0/0",
            "255.255.255.255/32, 255.255.255.255/32",
            "192.168.1.130/25, 192.168.1.128/25",
            "10.0.0.0/008,    10.0.0.0/8",
    })
    void parseClearsHostBitsAndFormatsDottedQuad(String text, String expected) {
        assertThat(Ip4Net.parse(text)).hasToString(expected);
    }

    @ParameterizedTest(name = "[{index}] \"{0}\"")
    @ValueSource(strings = {"", "10.0.0.0", "10.0.0.0/", "10.0.0.0/33", "10.0.0.0/-1", "10.0.0.0/8/8", "10.0.0/8",
            "10.0.0.0.0/8", "256.0.0.0/8", "010.0.0.0/8", "10.0.0.00/8", "1e1.0.0.0/8", " 10.0.0.0/8", "10.0.0.0/8 ",
            "10.0.0.0/+8", "fc00::/64", "localhost/8", "10.0.0.0/٨", "١0.0.0.0/8", "10.0.0.0/99999999999999999999"})
    void badCidrIsRejectedWithGosText(String text) {
        assertThatThrownBy(() -> Ip4Net.parse(text))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("invalid CIDR address: " + text);
    }

    @ParameterizedTest(name = "[{index}] \"{0}\"")
    @ValueSource(strings = {"", "10.0.0", "10.0.0.256", "10..0.1", "a.b.c.d", "01.2.3.4", "1.2.3.4 ", "::ffff:1.2.3.4"})
    void badAddressIsRejectedWithTheText(String text) {
        assertThatThrownBy(() -> Ip4Net.parseAddress(text))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessage("invalid IPv4 address: " + text);
    }

    @Test
    void addressRoundTripsThroughFormatAndInet() {
        int a = Ip4Net.parseAddress("192.0.2.254");
        assertThat(Ip4Net.formatAddress(a)).isEqualTo("192.0.2.254");
        assertThat(Ip4Net.toInet(a).getHostAddress()).isEqualTo("192.0.2.254");
        assertThat(Ip4Net.fromInet(Ip4Net.toInet(a))).isEqualTo(a);
        assertThat(Ip4Net.formatAddress(-1)).isEqualTo("255.255.255.255");
    }

    @Test
    void constructorRejectsBadPrefixLengths() {
        assertThatThrownBy(() -> new Ip4Net(0, 33)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("IPv4 prefix length must be 0..32, got 33");
        assertThatThrownBy(() -> new Ip4Net(0, -1)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("IPv4 prefix length must be 0..32, got -1");
    }

    @ParameterizedTest(name = "{0} next -> {1}")
    @CsvSource({
            "10.1.0.0/24,       10.1.1.0/24",
            "10.1.255.0/24,     10.2.0.0/24",
            "10.0.0.0/8,        11.0.0.0/8",
            "255.255.255.0/24,  0.0.0.0/24",
            "10.0.0.5/32,       10.0.0.6/32",
    })
    void nextIsTheFollowingNetworkOfTheSameLength(String net, String next) {
        assertThat(Ip4Net.parse(net).next()).hasToString(next);
    }

    @Test
    void containsAddressesAndSubnets() {
        Ip4Net net = Ip4Net.parse("10.244.0.0/16");
        assertThat(net.contains(Ip4Net.parseAddress("10.244.255.255"))).isTrue();
        assertThat(net.contains(Ip4Net.parseAddress("10.245.0.0"))).isFalse();
        assertThat(net.contains(Ip4Net.parse("10.244.3.0/24"))).isTrue();
        assertThat(net.contains(Ip4Net.parse("10.244.0.0/16"))).isTrue();
        assertThat(net.contains(Ip4Net.parse("10.0.0.0/8"))).isFalse();
        assertThat(Ip4Net.parse("0.0.0.0/0").contains(Ip4Net.parseAddress("255.1.2.3"))).isTrue();
    }

    @ParameterizedTest(name = "{0} overlaps {1}: {2}")
    @CsvSource({
            "10.0.0.0/8,    10.244.0.0/16, true",
            "10.244.0.0/16, 10.0.0.0/8,    true",
            "10.244.0.0/16, 10.245.0.0/16, false",
            "10.244.1.0/24, 10.244.1.0/24, true",
            "0.0.0.0/0,     192.0.2.0/24,  true",
            "192.0.2.0/25,  192.0.2.128/25, false",
    })
    void overlapsIsSymmetricAndUsesTheShorterPrefix(String a, String b, boolean expected) {
        assertThat(Ip4Net.parse(a).overlaps(Ip4Net.parse(b))).isEqualTo(expected);
        assertThat(Ip4Net.parse(b).overlaps(Ip4Net.parse(a))).isEqualTo(expected);
    }

    @ParameterizedTest(name = "{0} subnet /{1} #{2} = {3}")
    @CsvSource({
            "10.244.0.0/16, 24, 0,   10.244.0.0/24",
            "10.244.0.0/16, 24, 1,   10.244.1.0/24",
            "10.244.0.0/16, 24, 255, 10.244.255.0/24",
            "10.0.0.0/8,    20, 161, 10.10.16.0/20",
            "128.0.0.0/1,   32, 2147483647, 255.255.255.255/32",
            "10.3.0.0/28,   30, 3,   10.3.0.12/30",
    })
    void subnetAndIndexOfAreInverse(String net, int len, long index, String subnet) {
        Ip4Net n = Ip4Net.parse(net);
        assertThat(n.subnet(len, index)).hasToString(subnet);
        assertThat(n.indexOf(Ip4Net.parse(subnet))).isEqualTo(index);
    }

    @Test
    void subnetOutOfRangeIsRejected() {
        Ip4Net n = Ip4Net.parse("10.244.0.0/16");
        assertThatThrownBy(() -> n.subnet(24, 256)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("subnet index 256 out of 0..255 in 10.244.0.0/16");
        assertThatThrownBy(() -> n.subnet(24, -1)).isInstanceOf(IllegalArgumentException.class);
        assertThatThrownBy(() -> n.subnet(8, 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("subnet length 8 does not fit in 10.244.0.0/16");
        assertThatThrownBy(() -> n.indexOf(Ip4Net.parse("10.245.0.0/24"))).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("10.245.0.0/24 is not inside 10.244.0.0/16");
    }

    @Test
    void sizeAndOrder() {
        assertThat(Ip4Net.parse("0.0.0.0/0").size()).isEqualTo(1L << 32);
        assertThat(Ip4Net.parse("10.0.0.0/24").size()).isEqualTo(256);
        // unsigned order: 200.x after 10.x
        assertThat(Ip4Net.parse("200.0.0.0/8")).isGreaterThan(Ip4Net.parse("10.0.0.0/8"));
        assertThat(Ip4Net.parse("10.0.0.0/16")).isGreaterThan(Ip4Net.parse("10.0.0.0/8"));
    }
}
