package org.jflannel.linuxnet.netlink;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.util.List;
import java.util.Objects;
import java.util.function.Function;
import org.jflannel.core.MacAddress;
import org.junit.jupiter.api.Test;

/**
 * Decoding of real kernel replies. The resources under {@code captured/} are the replies iproute2
 * 6.1.0 received (kernel 6.18) in a scratch namespace set up like a flannel node: ext0 (veth,
 * 192.0.2.1/24), flannel.1 (vxlan id 1 local 192.0.2.1 dev ext0 dstport 8472 nolearning, mtu 1450,
 * 0e:00:00:00:01:01, 10.244.1.0/32), one peer (neighbour, FDB, onlink route) and a blackhole route;
 * captured with {@code strace -e trace=recvmsg -e read=3 -xx ip ...}.
 */
class CodecParseTest {

    private static <T> List<T> decode(String file, int type, Function<Captured.Message, T> f) throws Exception {
        return Captured.messages(file).stream().filter(m -> m.type() == type).map(f).filter(Objects::nonNull).toList();
    }

    @Test
    void linkDumpGivesEveryDeviceAndTheVxlanAttributes() throws Exception {
        List<Link> links = decode("link-dump.hex", Rtnl.RTM_NEWLINK,
                m -> LinkCodec.decode(m.buf(), m.payload(), m.payloadLength()));
        assertThat(links).extracting(Link::name).containsExactly("lo", "ext0p", "ext0", "flannel.1");
        assertThat(links.get(0).kind()).isEmpty();
        assertThat(links.get(2).kind()).isEqualTo("veth");
        Link vx = links.get(3);
        assertThat(vx.index()).isEqualTo(4);
        assertThat(vx.mtu()).isEqualTo(1450);
        assertThat(vx.up()).isTrue();
        assertThat(vx.mac()).isEqualTo(MacAddress.parse("0e:00:00:00:01:01"));
        assertThat(vx.vxlan()).isEqualTo(new VxlanInfo(1, 3, InetAddress.getByName("192.0.2.1"), null, 8472, false,
                false, false, false, false, false, 0, 0, false, false));
    }

    @Test
    void routeDumpGivesOnlinkBlackholeAndKernelRoutes() throws Exception {
        List<Route> routes = decode("route-dump.hex", Rtnl.RTM_NEWROUTE,
                m -> RouteCodec.decode(m.buf(), m.payload(), m.payloadLength()));
        assertThat(routes).containsExactlyInAnyOrder(
                Route.blackhole(IpPrefix.parse("10.244.0.0/16")),
                Route.onlink(IpPrefix.parse("10.244.2.0/24"), InetAddress.getByName("10.244.2.0"), 4),
                new Route(IpPrefix.parse("192.0.2.0/24"), null, 3, Route.SCOPE_LINK, false, Route.TYPE_UNICAST,
                        Route.TABLE_MAIN, 2 /* RTPROT_KERNEL */));
    }

    @Test
    void neighbourDumpGivesThePermanentPeerEntry() throws Exception {
        List<Neighbour> n = decode("neigh-dump.hex", Rtnl.RTM_NEWNEIGH,
                m -> NeighCodec.decodeNeighbour(m.buf(), m.payload(), m.payloadLength()));
        assertThat(n).contains(Neighbour.permanent(4, InetAddress.getByName("10.244.2.0"),
                MacAddress.parse("0e:00:00:00:02:02")));
    }

    @Test
    void fdbDumpKeepsOnlyEntriesWithARemoteVtep() throws Exception {
        List<FdbEntry> all = decode("fdb-dump.hex", Rtnl.RTM_NEWNEIGH,
                m -> NeighCodec.decodeFdb(m.buf(), m.payload(), m.payloadLength()));
        assertThat(all).containsExactly(new FdbEntry(4, MacAddress.parse("0e:00:00:00:02:02"),
                InetAddress.getByName("192.0.2.2")));
    }

    @Test
    void addressDumpGivesBothFamilies() throws Exception {
        List<Address> a = decode("addr-dump.hex", Rtnl.RTM_NEWADDR,
                m -> AddrCodec.decode(m.buf(), m.payload(), m.payloadLength()));
        assertThat(a).extracting(Address::linkIndex, x -> x.prefix().toString()).contains(
                org.assertj.core.groups.Tuple.tuple(3, "192.0.2.1/24"),
                org.assertj.core.groups.Tuple.tuple(4, "10.244.1.0/32"));
        assertThat(a).anySatisfy(x -> {
            assertThat(x.prefix().isIpv6()).isTrue();
            assertThat(x.scope()).isEqualTo(Route.SCOPE_LINK);
        });
    }

    @Test
    void errorReplyGivesErrnoAndTheExtendedAckText() throws Exception {
        Captured.Message m = Captured.messages("error-ext-ack.hex").get(0);
        assertThat(m.type()).isEqualTo(Rtnl.NLMSG_ERROR);
        assertThat(NlErrors.errno(m.buf(), m.at())).isEqualTo(22);
        assertThat(NlErrors.kernelMessage(m.buf(), m.at(), m.length(), m.flags()))
                .isEqualTo("Nexthop has invalid gateway");
    }

    @Test
    void eventsAreTypedByMessage() throws Exception {
        Captured.Message neigh = Captured.messages("neigh-dump.hex").stream()
                .filter(m -> m.type() == Rtnl.RTM_NEWNEIGH).findFirst().orElseThrow();
        assertThat(EventCodec.decode(Rtnl.RTM_DELNEIGH, neigh.buf(), neigh.payload(), neigh.payloadLength()))
                .isInstanceOfSatisfying(NetlinkEvent.NeighbourEvent.class, e -> assertThat(e.deleted()).isTrue());
        Captured.Message fdb = Captured.messages("fdb-dump.hex").stream()
                .filter(m -> m.type() == Rtnl.RTM_NEWNEIGH).reduce((x, y) -> y).orElseThrow();
        assertThat(EventCodec.decode(Rtnl.RTM_NEWNEIGH, fdb.buf(), fdb.payload(), fdb.payloadLength()))
                .isInstanceOf(NetlinkEvent.FdbEvent.class);
    }
}
