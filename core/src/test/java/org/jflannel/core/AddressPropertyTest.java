package org.jflannel.core;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.Inet6Address;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/** Formatting and parsing of addresses are inverse, and agree with the JDK on the bytes. */
class AddressPropertyTest {

    @Property(tries = 10_000)
    void ipv4FormatParseRoundTrip(@ForAll int address, @ForAll @IntRange(min = 0, max = 32) int prefix) {
        Ip4Net net = new Ip4Net(address, prefix);
        assertThat(Ip4Net.parse(net.toString())).isEqualTo(net);
        assertThat(Ip4Net.parseAddress(Ip4Net.formatAddress(address))).isEqualTo(address);
    }

    @Property(tries = 10_000)
    void ipv6FormatParseRoundTrip(@ForAll long high, @ForAll long low, @ForAll @IntRange(min = 0, max = 128) int prefix) {
        Ip6Net net = new Ip6Net(high, low, prefix);
        assertThat(Ip6Net.parse(net.toString())).isEqualTo(net);
    }

    /** Sparse addresses (many zero groups) exercise "::" placement; the JDK's full form must parse to the same bits. */
    @Property(tries = 10_000)
    void ipv6AgreesWithTheJdk(@ForAll @IntRange(min = 0, max = 255) int zeroMask, @ForAll long high, @ForAll long low) {
        long h = high;
        long l = low;
        for (int g = 0; g < 8; g++) {
            if ((zeroMask & (1 << g)) != 0) {
                if (g < 4) {
                    h &= ~(0xffffL << (48 - 16 * g));
                } else {
                    l &= ~(0xffffL << (48 - 16 * (g - 4)));
                }
            }
        }
        Inet6Address jdk = Ip6Net.toInet(h, l);
        long[] fromJdkText = Ip6Net.parseAddress(jdk.getHostAddress());
        assertThat(fromJdkText).containsExactly(h, l);
        String ours = Ip6Net.formatAddress(h, l);
        assertThat(Ip6Net.parseAddress(ours)).containsExactly(h, l);
        assertThat(ours).doesNotContain(":::").doesNotContainPattern("[A-F]").doesNotContainPattern("(^|:)0[0-9a-f]");
    }
}
