package org.jflannel.backend.wireguard.protocol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.jflannel.backend.wireguard.protocol.Net.ip;
import static org.jflannel.backend.wireguard.protocol.Net.ipv4;

import java.net.InetAddress;
import java.security.SecureRandom;
import java.util.List;
import org.jflannel.backend.wireguard.crypto.X25519;
import org.jflannel.core.Ip6Net;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * IPv6 in the protocol device: peers at IPv6 endpoints whose allowed IPs hold an IPv4 and an IPv6
 * subnet (auto mode's peer), IPv6 packets routed by their destination, delivered exactly (padding cut
 * by the payload length), a spoofed IPv6 source dropped, longest prefix first; endpoints and allowed
 * IPs of both families.
 */
class DeviceIpv6Test {
    private static final SecureRandom RANDOM = new SecureRandom();
    private static final long POD_NET = 0xfd00_0010_0244_0000L; // fd00:10:244::/48 and below
    private Net net;
    private Device a;
    private Device b;
    private byte[] aKey;
    private byte[] bKey;
    private Endpoint ea;
    private Endpoint eb;

    @BeforeEach
    void connect() throws Exception {
        net = new Net();
        aKey = X25519.generatePrivate(RANDOM);
        bKey = X25519.generatePrivate(RANDOM);
        ea = Endpoint.of(InetAddress.getByName("2001:db8::1"), 51820);
        eb = Endpoint.of(InetAddress.getByName("2001:db8::2"), 51820);
        a = net.device(ea, aKey, Timings.standard());
        b = net.device(eb, bKey, Timings.standard());
        a.setPeer(X25519.publicKey(bKey), null, eb, List.of(new AllowedIp(ip(10, 244, 2, 0), 24), AllowedIp.v6(POD_NET | 2, 0, 64)), 0);
        b.setPeer(X25519.publicKey(aKey), null, ea, List.of(new AllowedIp(ip(10, 244, 1, 0), 24), AllowedIp.v6(POD_NET | 1, 0, 64)), 0);
    }

    @Test
    void ipv6AndIpv4PacketsGoBothWaysOverIpv6Endpoints() {
        byte[] ab = ipv6(POD_NET | 1, 5, POD_NET | 2, 7, 100);
        a.sendPacket(ab, 0, ab.length); // staged behind the handshake, then sealed
        net.pump();
        byte[] ba = ipv6(POD_NET | 2, 7, POD_NET | 1, 5, 1333);
        b.sendPacket(ba, 0, ba.length);
        byte[] ba4 = ipv4(ip(10, 244, 2, 5), ip(10, 244, 1, 5), 40);
        b.sendPacket(ba4, 0, ba4.length);
        net.pump();

        assertThat(net.delivered.get(b)).containsExactly(ab);
        assertThat(net.delivered.get(a)).containsExactly(ba, ba4);
        assertThat(net.sent).allMatch(g -> !g.to().ipv4() && !g.from().ipv4());
        assertThat(a.peer(X25519.publicKey(bKey)).orElseThrow().endpoint()).isEqualTo(eb);
    }

    @Test
    void aSpoofedIpv6SourceIsDroppedAndAnUnroutedDestinationHasNoPeer() {
        byte[] warmUp = ipv6(POD_NET | 1, 5, POD_NET | 2, 7, 10);
        a.sendPacket(warmUp, 0, warmUp.length);
        net.pump();
        byte[] spoofed = ipv6(POD_NET | 9, 5, POD_NET | 2, 7, 20); // A may only send from fd00:10:244:1::/64
        a.sendPacket(spoofed, 0, spoofed.length);
        net.pump();
        assertThat(net.delivered.get(b)).containsExactly(warmUp);
        assertThat(b.counters().droppedBadSource.sum()).isEqualTo(1);

        long noPeer = a.counters().droppedNoPeer.sum();
        byte[] elsewhere = ipv6(POD_NET | 1, 5, POD_NET | 3, 1, 20);
        assertThat(a.peerForPacket(elsewhere, 0, elsewhere.length)).isNull();
        assertThat(a.counters().droppedNoPeer.sum()).isEqualTo(noPeer + 1);
    }

    @Test
    void ipv6RoutesTakeTheLongestPrefixAndNeverMatchIpv4() {
        byte[] k3 = X25519.publicKey(X25519.generatePrivate(RANDOM));
        Peer wide = a.setPeer(k3, null, null, List.of(AllowedIp.v6(POD_NET, 0, 48)), 0);
        Peer b2 = a.peer(X25519.publicKey(bKey)).orElseThrow();
        assertThat(a.route6(POD_NET | 2, 0x1234)).isSameAs(b2);
        assertThat(a.route6(POD_NET | 0x77, 1)).isSameAs(wide);
        assertThat(a.route6(0x2001_0db8_0000_0000L, 1)).isNull();
        assertThat(a.route(ip(10, 244, 9, 9))).as("no IPv4 route from an IPv6 prefix").isNull();
        // an IPv4-mapped destination in an IPv4 packet's bytes does not reach the v6 table
        byte[] p4 = ipv4(ip(10, 244, 1, 5), ip(10, 244, 2, 9), 0);
        assertThat(a.peerForPacket(p4, 0, p4.length)).isSameAs(b2);
    }

    @Test
    void allowedIpsAndEndpointsOfBothFamilies() throws Exception {
        AllowedIp v6 = AllowedIp.v6(POD_NET | 2, 0xffff, 64);
        assertThat(v6.low()).as("host bits cleared").isZero();
        assertThat(v6).hasToString("fd00:10:244:2::/64");
        assertThat(AllowedIp.v6(-1L, -1L, 65).low()).isEqualTo(1L << 63);
        assertThat(AllowedIp.v6(-1L, -1L, 0).high()).isZero();
        assertThat(new AllowedIp(ip(10, 244, 2, 9), 24)).hasToString("10.244.2.0/24");
        assertThat(new AllowedIp(ip(10, 244, 2, 9), 24).contains(POD_NET, 0)).isFalse();
        assertThatThrownBy(() -> AllowedIp.v6(0, 0, 129)).hasMessageContaining("0..128");
        assertThatThrownBy(() -> new AllowedIp(0, 33)).hasMessageContaining("0..32");

        assertThat(Endpoint.of(InetAddress.getByName("192.0.2.2"), 51820)).isEqualTo(new Endpoint(ip(192, 0, 2, 2), 51820))
                .as("an IPv4 endpoint is ::ffff:a.b.c.d, as a dual-stack socket reports its sender")
                .isEqualTo(new Endpoint(0L, 0xffff_c000_0202L, 51820));
        assertThat(Endpoint.of(InetAddress.getByName("192.0.2.2"), 51820)).hasToString("192.0.2.2:51820");
        assertThat(ea).hasToString("[2001:db8::1]:51820");
        assertThat(ea.ipv4()).isFalse();
        assertThat(ea.cookieSource()).hasSize(18);
        assertThat(new Endpoint(ip(192, 0, 2, 2), 51820).cookieSource()).containsExactly(192, 0, 2, 2, 0xca, 0x6c);
        assertThat(Ip6Net.formatAddress(ea.high(), ea.low())).isEqualTo("2001:db8::1");
    }

    /** A minimal IPv6 UDP packet {@code src} → {@code dst} (addresses as high, low) with {@code payload} bytes. */
    static byte[] ipv6(long srcHigh, long srcLow, long dstHigh, long dstLow, int payload) {
        byte[] p = new byte[40 + payload];
        p[0] = 0x60;
        p[4] = (byte) (payload >>> 8);
        p[5] = (byte) payload;
        p[6] = 17;
        p[7] = 64;
        long[] words = {srcHigh, srcLow, dstHigh, dstLow};
        for (int w = 0; w < 4; w++) {
            for (int i = 0; i < 8; i++) {
                p[8 + w * 8 + i] = (byte) (words[w] >>> (56 - 8 * i));
            }
        }
        for (int i = 0; i < payload; i++) {
            p[40 + i] = (byte) (i * 13 + 3);
        }
        return p;
    }
}
