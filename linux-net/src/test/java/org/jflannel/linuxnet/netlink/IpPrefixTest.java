package org.jflannel.linuxnet.netlink;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class IpPrefixTest {

    @ParameterizedTest(name = "{0} contains {1}: {2}")
    @CsvSource({
        "10.244.0.0/16, 10.244.3.7, true",
        "10.244.0.0/16, 10.245.0.1, false",
        "10.244.0.0/17, 10.244.127.255, true",
        "10.244.0.0/17, 10.244.128.0, false",
        "0.0.0.0/0, 192.0.2.1, true",
        "192.0.2.1/32, 192.0.2.1, true",
        "192.0.2.1/32, 192.0.2.2, false",
        "10.244.0.0/16, fd00::1, false",
        "fd00:10::/48, fd00:10:0:ffff::1, true",
        "fd00:10::/48, fd00:11::1, false",
    })
    void containsAnAddressOfItsFamilyOnly(String prefix, String address, boolean expected) throws Exception {
        assertThat(IpPrefix.parse(prefix).contains(InetAddress.getByName(address))).isEqualTo(expected);
    }

    @ParameterizedTest(name = "{0} strictly contains {1}: {2}")
    @CsvSource({
        "10.244.0.0/16, 10.244.3.0/24, true",
        "10.244.0.0/16, 10.244.0.0/16, false",
        "10.244.0.0/16, 10.244.0.0/15, false",
        "10.244.0.0/16, 10.245.3.0/24, false",
        "fd00:10::/48, fd00:10:0:3::/64, true",
        "fd00:10::/48, 10.244.3.0/24, false",
    })
    void strictlyContainsOnlySmallerPrefixesInside(String outer, String inner, boolean expected) {
        assertThat(IpPrefix.parse(outer).strictlyContains(IpPrefix.parse(inner))).isEqualTo(expected);
    }
}
