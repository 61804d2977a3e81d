package org.jflannel.backend.wireguard.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;

/** Cryptokey routing's lookup: longest prefix first across lengths and families, checked against a plain scan. */
class RouteTableTest {
    private static Peer peer(int i) {
        return new Peer(new byte[] {(byte) i}, new byte[32], 0);
    }

    private static RouteTable.Route v4(String cidr, Peer p) {
        String[] parts = cidr.split("/");
        String[] o = parts[0].split("\\.");
        int a = Integer.parseInt(o[0]) << 24 | Integer.parseInt(o[1]) << 16 | Integer.parseInt(o[2]) << 8 | Integer.parseInt(o[3]);
        return new RouteTable.Route(new AllowedIp(a, Integer.parseInt(parts[1])), p);
    }

    private static int ip(int a, int b, int c, int d) {
        return a << 24 | b << 16 | c << 8 | d;
    }

    @Test
    void longestPrefixWinsAcrossLengths() {
        Peer wide = peer(1);
        Peer subnet = peer(2);
        Peer host = peer(3);
        Peer everything = peer(4);
        RouteTable t = RouteTable.build(List.of(v4("10.0.0.0/8", wide), v4("10.244.1.0/24", subnet),
                v4("10.244.1.7/32", host), v4("0.0.0.0/0", everything)));
        assertThat(t.route(ip(10, 244, 1, 7))).isSameAs(host);
        assertThat(t.route(ip(10, 244, 1, 8))).isSameAs(subnet);
        assertThat(t.route(ip(10, 244, 2, 1))).isSameAs(wide);
        assertThat(t.route(ip(192, 168, 0, 1))).isSameAs(everything);
        assertThat(t.route(ip(255, 255, 255, 255))).isSameAs(everything);
        assertThat(t.route6(0x20010db8_00000000L, 1)).as("no IPv6 prefix: no peer").isNull();
    }

    @Test
    void ipv6LongestPrefixAndTheHalvesApart() {
        Peer a = peer(1);
        Peer b = peer(2);
        Peer c = peer(3);
        RouteTable t = RouteTable.build(List.of(
                new RouteTable.Route(AllowedIp.v6(0xfd00_0000_0000_0000L, 0, 8), a),
                new RouteTable.Route(AllowedIp.v6(0xfd00_0001_0000_0000L, 0, 64), b),
                new RouteTable.Route(AllowedIp.v6(0xfd00_0001_0000_0000L, 0x0000_0000_0000_0100L, 120), c)));
        assertThat(t.route6(0xfd00_0001_0000_0000L, 0x0000_0000_0000_01ffL)).isSameAs(c);
        assertThat(t.route6(0xfd00_0001_0000_0000L, 0x0000_0000_0000_0200L)).isSameAs(b);
        assertThat(t.route6(0xfd00_0002_0000_0000L, 0x0000_0000_0000_0100L)).as("the same low half under another /64").isSameAs(a);
        assertThat(t.route6(0xfe00_0000_0000_0000L, 0)).isNull();
        assertThat(t.route(ip(253, 0, 0, 1))).as("an IPv4 address is not looked up among IPv6 prefixes").isNull();
        assertThat(RouteTable.EMPTY.route(0)).isNull();
        assertThat(RouteTable.EMPTY.route6(0, 0)).isNull();
    }

    @Test
    void aPrefixGivenTwiceGoesToTheFirst() {
        Peer first = peer(1);
        Peer second = peer(2);
        RouteTable t = RouteTable.build(List.of(v4("10.244.1.0/24", first), v4("10.244.1.0/24", second)));
        assertThat(t.route(ip(10, 244, 1, 1))).isSameAs(first);
    }

    /** Many peers and lengths, random addresses: the same answers as scanning every prefix, longest first. */
    @Test
    void agreesWithAScanOverEveryPrefix() {
        Random random = new Random(22);
        List<RouteTable.Route> routes = new ArrayList<>();
        for (int i = 0; i < 3000; i++) {
            int len = new int[] {8, 16, 20, 24, 24, 24, 28, 32}[random.nextInt(8)];
            // addresses drawn from 10.0.0.0/10 so that prefixes overlap
            routes.add(new RouteTable.Route(new AllowedIp(0x0a000000 | random.nextInt(1 << 22), len), peer(i)));
            long high = 0xfd00_0000_0000_0000L | (random.nextLong() & 0x0000_00ff_ffff_ffffL);
            int len6 = new int[] {48, 64, 64, 80, 128}[random.nextInt(5)];
            routes.add(new RouteTable.Route(AllowedIp.v6(high, random.nextLong() & 0xff, len6), peer(i)));
        }
        RouteTable t = RouteTable.build(routes);
        List<RouteTable.Route> longestFirst = new ArrayList<>(routes);
        longestFirst.sort((x, y) -> Integer.compare(y.prefix().prefixLength(), x.prefix().prefixLength())); // stable
        int found = 0;
        for (int n = 0; n < 200_000; n++) {
            int ip = 0x0a000000 | random.nextInt(1 << 22);
            Peer expected = scan(longestFirst, ip);
            assertThat(t.route(ip)).as("%08x", ip).isSameAs(expected);
            found += expected != null ? 1 : 0;
        }
        for (RouteTable.Route r : routes) {
            if (r.prefix().ipv6()) {
                long low = r.prefix().low() | (r.prefix().prefixLength() == 128 ? 0 : random.nextInt(256) & 0xff);
                Peer expected = scan6(longestFirst, r.prefix().high(), low);
                assertThat(expected).isNotNull();
                assertThat(t.route6(r.prefix().high(), low)).isSameAs(expected);
            }
        }
        assertThat(found).as("the random addresses hit prefixes, not only misses").isGreaterThan(50_000);
    }

    private static Peer scan(List<RouteTable.Route> longestFirst, int ip) {
        for (RouteTable.Route r : longestFirst) {
            if (r.prefix().contains(ip)) {
                return r.peer();
            }
        }
        return null;
    }

    private static Peer scan6(List<RouteTable.Route> longestFirst, long high, long low) {
        for (RouteTable.Route r : longestFirst) {
            if (r.prefix().contains(high, low)) {
                return r.peer();
            }
        }
        return null;
    }
}
