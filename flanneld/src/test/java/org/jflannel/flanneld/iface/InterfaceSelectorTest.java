package org.jflannel.flanneld.iface;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import java.util.stream.Stream;
import org.jflannel.core.ExternalInterface;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class InterfaceSelectorTest {
    static final int PERM = 1;
    static final int DEPR = 2;
    static final int TEMP = 4;

    static NetSnapshot.Addr addr(String ip, int props) {
        InetAddress a = IpLiteral.parse(ip).orElseThrow();
        return new NetSnapshot.Addr(a, a.getAddress().length == 4 ? 24 : 64, 0,
                (props & PERM) != 0, (props & DEPR) != 0, (props & TEMP) != 0);
    }

    static NetSnapshot.Iface iface(int index, String name, int mtu, NetSnapshot.Addr... addrs) {
        return new NetSnapshot.Iface(index, name, mtu, 0, List.of(addrs));
    }

    static final List<NetSnapshot.Iface> IFACES = List.of(
            iface(1, "lo", 65536, addr("127.0.0.1", PERM), addr("::1", PERM)),
            iface(2, "eth0", 1500, addr("169.254.5.5", PERM), addr("192.168.1.10", PERM), addr("fe80::1", PERM),
                    addr("2001:db8::99", TEMP), addr("2001:db8::77", DEPR | PERM), addr("2001:db8::10", PERM)),
            iface(3, "eth1", 9000, addr("10.0.0.5", 0), addr("10.0.0.6", PERM), addr("2001:db8:1::6", PERM)),
            iface(4, "wg0", 1420, addr("172.16.0.1", PERM)),
            iface(5, "noip", 1500),
            iface(6, "zero", 0, addr("192.0.2.9", PERM)),
            iface(7, "ll0", 1500, addr("169.254.9.9", PERM)));

    static NetSnapshot snapshot(NetSnapshot.DefaultRoute... routes) {
        return new NetSnapshot(IFACES, List.of(routes));
    }

    static final NetSnapshot BOTH_ON_ETH0 = snapshot(new NetSnapshot.DefaultRoute(false, 2), new NetSnapshot.DefaultRoute(true, 2));

    /** Request in a compact text form: "iface=a,b regex=x reach=ip pub=ip pub6=ip stack=4|6|46". */
    static InterfaceSelector.Request req(String spec) {
        List<String> iface = new ArrayList<>();
        List<String> regex = new ArrayList<>();
        String reach = "";
        String pub = "";
        String pub6 = "";
        String stack = "4";
        for (String part : spec.isBlank() ? new String[0] : spec.trim().split(" +")) {
            String k = part.substring(0, part.indexOf('='));
            String v = part.substring(part.indexOf('=') + 1);
            switch (k) {
                case "iface" -> iface.addAll(List.of(v.split(",")));
                case "regex" -> regex.add(v);
                case "reach" -> reach = v;
                case "pub" -> pub = v;
                case "pub6" -> pub6 = v;
                case "stack" -> stack = v;
                default -> throw new IllegalArgumentException(k);
            }
        }
        return new InterfaceSelector.Request(iface, regex, reach, pub, pub6, stack.contains("4"), stack.contains("6"));
    }

    static Stream<Arguments> chosen() {
        return Stream.of(
                // request, name, iface v4, iface v6, ext v4, ext v6
                Arguments.of("", "eth0", "192.168.1.10", null, "192.168.1.10", null),
                Arguments.of("pub=10.0.0.6", "eth1", "10.0.0.6", null, "10.0.0.6", null),
                Arguments.of("pub=10.0.0.5", "eth1", "10.0.0.5", null, "10.0.0.5", null),
                Arguments.of("iface=eth1", "eth1", "10.0.0.6", null, "10.0.0.6", null),
                Arguments.of("iface=nope,wg0", "wg0", "172.16.0.1", null, "172.16.0.1", null),
                Arguments.of("iface=172.16.0.1", "wg0", "172.16.0.1", null, "172.16.0.1", null),
                Arguments.of("iface=eth0 pub=203.0.113.1", "eth0", "192.168.1.10", null, "203.0.113.1", null),
                Arguments.of("iface=nope regex=^10\\.0\\.", "eth1", "10.0.0.6", null, "10.0.0.6", null),
                Arguments.of("regex=^wg", "wg0", "172.16.0.1", null, "172.16.0.1", null),
                Arguments.of("regex=([ regex=^wg", "wg0", "172.16.0.1", null, "172.16.0.1", null),
                Arguments.of("iface=noip,zero,eth1", "eth1", "10.0.0.6", null, "10.0.0.6", null),
                Arguments.of("iface=ll0", "ll0", "169.254.9.9", null, "169.254.9.9", null),
                Arguments.of("reach=198.51.100.7", "eth1", "10.0.0.6", null, "10.0.0.6", null),
                Arguments.of("iface=nope reach=198.51.100.7", "eth1", "10.0.0.6", null, "10.0.0.6", null),
                Arguments.of("stack=46", "eth0", "192.168.1.10", "2001:db8::10", "192.168.1.10", "2001:db8::10"),
                Arguments.of("stack=6 iface=eth0", "eth0", null, "2001:db8::10", null, "2001:db8::10"),
                Arguments.of("stack=6 pub6=2001:db8:1::6", "eth1", null, "2001:db8:1::6", null, "2001:db8:1::6"),
                Arguments.of("stack=46 iface=192.168.1.10 pub6=2001:db8::10", "eth0", "192.168.1.10", "2001:db8::10",
                        "192.168.1.10", "2001:db8::10"),
                Arguments.of("stack=46 iface=eth1 pub6=2001:db8::abc", "eth1", "10.0.0.6", "2001:db8:1::6", "10.0.0.6",
                        "2001:db8::abc"));
    }

    @ParameterizedTest(name = "[{index}] {0} -> {1}")
    @MethodSource("chosen")
    void picksInterfaceAndAddresses(String request, String name, String v4, String v6, String ext4, String ext6)
            throws Exception {
        ExternalInterface e = selector(BOTH_ON_ETH0).select(req(request));
        assertThat(e.name()).isEqualTo(name);
        assertThat(e.index()).isEqualTo(IFACES.stream().filter(i -> i.name().equals(name)).findFirst().orElseThrow().index());
        assertThat(e.mtu()).isEqualTo(IFACES.stream().filter(i -> i.name().equals(name)).findFirst().orElseThrow().mtu());
        assertThat(text(e.address())).isEqualTo(v4);
        assertThat(text(e.address6())).isEqualTo(v6);
        assertThat(text(e.publicIp())).isEqualTo(ext4);
        assertThat(text(e.publicIpv6())).isEqualTo(ext6);
    }

    static final String NO_MATCH = "Failed to find interface to use that matches the interfaces and/or regexes provided";
    static final String NONE = "Failed to find any valid interface to use: ";

    static Stream<Arguments> failures() {
        return Stream.of(
                Arguments.of("pub=203.0.113.1", BOTH_ON_ETH0,
                        NONE + "error looking up interface 203.0.113.1: no interface with given IP found"),
                Arguments.of("pub=bogus", BOTH_ON_ETH0,
                        NONE + "error looking up interface bogus: route ip+net: no such network interface"),
                Arguments.of("iface=eth0 pub=bogus", BOTH_ON_ETH0, NO_MATCH),
                Arguments.of("iface=nope", BOTH_ON_ETH0, NO_MATCH),
                Arguments.of("iface=noip", BOTH_ON_ETH0, NO_MATCH),
                Arguments.of("iface=zero", BOTH_ON_ETH0, NO_MATCH),
                Arguments.of("regex=^xyz", BOTH_ON_ETH0, NO_MATCH),
                Arguments.of("regex=([", BOTH_ON_ETH0, NO_MATCH),
                Arguments.of("reach=203.0.113.99", BOTH_ON_ETH0, NO_MATCH),
                Arguments.of("stack=6 iface=wg0", BOTH_ON_ETH0, NO_MATCH),
                Arguments.of("", snapshot(), NONE + "failed to get default interface: Unable to find default route"),
                Arguments.of("stack=6", snapshot(new NetSnapshot.DefaultRoute(false, 2)),
                        NONE + "failed to get default interface: Unable to find default v6 route"),
                Arguments.of("", snapshot(new NetSnapshot.DefaultRoute(false, 0)),
                        NONE + "failed to get default interface: Found default route but could not determine interface"),
                Arguments.of("stack=46", snapshot(new NetSnapshot.DefaultRoute(false, 2), new NetSnapshot.DefaultRoute(true, 3)),
                        NONE + "v6 default route interface eth1 must be the same with v4 default route interface eth0"),
                Arguments.of("stack=46 pub=192.168.1.10 pub6=2001:db8:1::6", BOTH_ON_ETH0,
                        NONE + "v6 interface eth1 must be the same with v4 interface eth0"),
                Arguments.of("", snapshot(new NetSnapshot.DefaultRoute(false, 5)),
                        NONE + "failed to find IPv4 address for interface noip"),
                Arguments.of("", snapshot(new NetSnapshot.DefaultRoute(false, 6)),
                        NONE + "failed to determine MTU for <nil> interface"),
                Arguments.of("pub=192.168.1.10 pub6=::zz", BOTH_ON_ETH0, null),
                Arguments.of("stack=46 pub6=zz", BOTH_ON_ETH0, NONE + "error looking up interface zz: route ip+net: no such network interface"),
                Arguments.of("stack=46 iface=eth0 pub6=zz", BOTH_ON_ETH0, NO_MATCH));
    }

    @ParameterizedTest(name = "[{index}] {0}")
    @MethodSource("failures")
    void failsWithUpstreamMessage(String request, NetSnapshot snapshot, String message) throws Exception {
        if (message == null) { // v4-only: a bad --public-ipv6 is not looked at when it is not used for the lookup
            assertThat(selector(snapshot).select(req(request)).name()).isEqualTo("eth0");
            return;
        }
        assertThatThrownBy(() -> selector(snapshot).select(req(request)))
                .isInstanceOf(SelectionException.class).hasMessage(message);
    }

    private static InterfaceSelector selector(NetSnapshot snapshot) {
        return new InterfaceSelector(snapshot, ip -> ip.getHostAddress().equals("198.51.100.7") ? OptionalInt.of(3) : OptionalInt.empty());
    }

    private static String text(InetAddress a) {
        return a == null ? null : IpLiteral.format(a);
    }
}
