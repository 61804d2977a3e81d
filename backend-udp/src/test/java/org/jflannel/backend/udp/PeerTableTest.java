package org.jflannel.backend.udp;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.jflannel.core.Ip4Net;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class PeerTableTest {
    static final PeerTable TABLE = PeerTable.of(List.of(
            peer("10.244.0.0/16", "192.0.2.1"),
            peer("10.244.2.0/24", "192.0.2.2"),
            peer("10.244.2.128/25", "192.0.2.3"),
            peer("172.16.0.0/24", "192.0.2.4"),
            peer("200.1.0.0/24", "192.0.2.200"), // high bit set: signed ordering must still find it
            peer("10.9.0.0/24", "192.0.2.2"))); // a second subnet behind the same public IP

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource({
        "10.244.2.5,   10.244.2.0/24",
        "10.244.2.130, 10.244.2.128/25",
        "10.244.2.127, 10.244.2.0/24",
        "10.244.7.1,   10.244.0.0/16",
        "172.16.0.255, 172.16.0.0/24",
        "200.1.0.9,    200.1.0.0/24",
        "172.16.1.1,   ''",
        "10.245.0.1,   ''",
        "0.0.0.0,      ''",
        "255.255.255.255, ''",
    })
    void longestPrefixWins(String destination, String expected) {
        Peer p = TABLE.route(Ip4Net.parseAddress(destination));
        assertThat(p == null ? "" : p.subnet().toString()).isEqualTo(expected);
    }

    @ParameterizedTest(name = "from {0} src {1} -> {2}")
    @CsvSource({
        "192.0.2.2,   10.244.2.9, true",
        "192.0.2.2,   10.9.0.4,   true",
        "192.0.2.2,   10.244.3.9, false",
        "192.0.2.3,   10.244.2.9, false",
        "192.0.2.200, 200.1.0.1,  true",
        "192.0.2.99,  10.244.2.9, false",
    })
    void innerSourceMustLieInASubnetOfTheSendingPeer(String sender, String source, boolean allowed) {
        assertThat(TABLE.allows(Ip4Net.parseAddress(sender), Ip4Net.parseAddress(source))).isEqualTo(allowed);
    }

    @Test
    void knowsOnlyPublishedSenders() {
        assertThat(TABLE.knowsSender(Ip4Net.parseAddress("192.0.2.200"))).isTrue();
        assertThat(TABLE.knowsSender(Ip4Net.parseAddress("192.0.2.5"))).isFalse();
        assertThat(PeerTable.EMPTY.knowsSender(0)).isFalse();
        assertThat(PeerTable.EMPTY.route(0)).isNull();
    }

    @Test
    void aLaterPeerWithTheSameSubnetReplacesTheEarlier() {
        PeerTable t = PeerTable.of(List.of(peer("10.244.2.0/24", "192.0.2.2"), peer("10.244.2.0/24", "192.0.2.9")));
        assertThat(t.size()).isEqualTo(1);
        assertThat(t.route(Ip4Net.parseAddress("10.244.2.1")).endpoint().getAddress().getHostAddress()).isEqualTo("192.0.2.9");
        assertThat(t.knowsSender(Ip4Net.parseAddress("192.0.2.2"))).isFalse();
    }

    static Peer peer(String subnet, String publicIp) {
        return Peer.of(Ip4Net.parse(subnet), Ip4Net.toInet(Ip4Net.parseAddress(publicIp)), 8285);
    }
}
