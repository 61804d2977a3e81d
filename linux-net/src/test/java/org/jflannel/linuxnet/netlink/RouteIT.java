package org.jflannel.linuxnet.netlink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.InetAddress;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.TestNs;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("netns")
class RouteIT {
    private static final IpPrefix PEER = IpPrefix.parse("10.244.2.0/24");

    @Test
    void onlinkRouteViaTheVxlanDeviceIsReplacedListedAndDeleted() throws Exception {
        try (TestNs t = TestNs.create("rte")) {
            Witness ip = new Witness(t);
            t.ns.run(() -> {
                try (RtNetlink nl = RtNetlink.open()) {
                    VxlanNode node = VxlanNode.setUp(nl);
                    Route r = Route.onlink(PEER, InetAddress.getByName("10.244.2.0"), node.vxlan);
                    nl.replaceRoute(r);
                    nl.replaceRoute(r); // idempotent

                    assertThat(nl.routesOf(node.vxlan)).contains(r);
                    assertThat(nl.routes(2, Route.TABLE_MAIN)).contains(r);
                    JsonNode w = ip.json("ip", "-j", "route", "show", "10.244.2.0/24").get(0);
                    assertThat(w.get("gateway").asText()).isEqualTo("10.244.2.0");
                    assertThat(w.get("dev").asText()).isEqualTo("flannel.1");
                    assertThat(w.get("flags").toString()).contains("onlink");

                    nl.deleteRoute(r);
                    nl.deleteRoute(r); // quiet when gone
                    assertThat(nl.routesOf(node.vxlan)).doesNotContain(r);
                    assertThat(ip.json("ip", "-j", "route", "show", "10.244.2.0/24")).isEmpty();
                }
            });
        }
    }

    @Test
    void blackholeRouteAndPerTableRoutes() throws Exception {
        try (TestNs t = TestNs.create("rte")) {
            Witness ip = new Witness(t);
            t.ns.run(() -> {
                try (RtNetlink nl = RtNetlink.open()) {
                    VxlanNode node = VxlanNode.setUp(nl);
                    Route hole = Route.blackhole(IpPrefix.parse("10.244.0.0/16"));
                    nl.replaceRoute(hole);
                    assertThat(nl.routes(2, Route.TABLE_MAIN)).contains(hole);
                    assertThat(ip.json("ip", "-j", "route", "show", "10.244.0.0/16").get(0).get("type").asText())
                            .isEqualTo("blackhole");

                    Route in100 = Route.onlink(PEER, InetAddress.getByName("10.244.2.0"), node.vxlan).inTable(100);
                    Route in1000 = Route.device(IpPrefix.parse("10.9.0.0/16"), node.vxlan).inTable(1000);
                    nl.replaceRoute(in100);
                    nl.replaceRoute(in1000);
                    assertThat(nl.routes(0, 100)).containsExactly(in100);
                    assertThat(nl.routes(0, 1000)).containsExactly(in1000);
                    assertThat(nl.routes(0, Route.TABLE_MAIN)).doesNotContain(in100, in1000);
                    assertThat(ip.json("ip", "-j", "route", "show", "table", "100").get(0).get("dst").asText())
                            .isEqualTo("10.244.2.0/24");
                    assertThat(ip.json("ip", "-j", "route", "show", "table", "1000").get(0).get("dst").asText())
                            .isEqualTo("10.9.0.0/16");

                    nl.deleteRoute(hole);
                    nl.deleteRoute(in1000);
                    assertThat(ip.json("ip", "-j", "route", "show", "table", "1000")).isEmpty();
                    assertThat(ip.json("ip", "-j", "route", "show", "10.244.0.0/16")).isEmpty();
                }
            });
        }
    }

    @Test
    void ipv6RouteAndRouteGet() throws Exception {
        try (TestNs t = TestNs.create("rte")) {
            Witness ip = new Witness(t);
            t.ns.run(() -> {
                try (RtNetlink nl = RtNetlink.open()) {
                    VxlanNode node = VxlanNode.setUp(nl);
                    Route v6 = Route.device(IpPrefix.parse("fd00:2::/64"), node.vxlan);
                    nl.replaceRoute(v6);
                    assertThat(nl.routes(10, Route.TABLE_MAIN)).anySatisfy(r -> {
                        assertThat(r.dst()).isEqualTo(v6.dst());
                        assertThat(r.linkIndex()).isEqualTo(node.vxlan);
                    });
                    assertThat(ip.json("ip", "-j", "-6", "route", "show", "fd00:2::/64").get(0).get("dev").asText())
                            .isEqualTo("flannel.1");
                    nl.deleteRoute(v6);
                    nl.deleteRoute(v6);
                    assertThat(nl.routes(10, Route.TABLE_MAIN)).noneMatch(r -> v6.dst().equals(r.dst()));
                    assertThat(ip.json("ip", "-j", "-6", "route", "show", "fd00:2::/64")).isEmpty();

                    nl.replaceRoute(Route.onlink(PEER, InetAddress.getByName("10.244.2.0"), node.vxlan));
                    var got = nl.routeGet(InetAddress.getByName("10.244.2.7"));
                    assertThat(got).hasSize(1);
                    assertThat(got.get(0).linkIndex()).isEqualTo(node.vxlan);
                    assertThat(got.get(0).gateway()).isEqualTo(InetAddress.getByName("10.244.2.0"));
                    JsonNode w = ip.json("ip", "-j", "route", "get", "10.244.2.7").get(0);
                    assertThat(w.get("gateway").asText()).isEqualTo("10.244.2.0");
                    assertThat(w.get("dev").asText()).isEqualTo("flannel.1");

                    var direct = nl.routeGet(InetAddress.getByName("192.0.2.2"));
                    assertThat(direct).singleElement().satisfies(r -> {
                        assertThat(r.gateway()).isNull();
                        assertThat(r.linkIndex()).isEqualTo(node.ext);
                    });

                    assertThatThrownBy(() -> nl.routeGet(InetAddress.getByName("203.0.113.1")))
                            .isInstanceOfSatisfying(NetlinkException.class,
                                    e -> assertThat(e.errnoName()).isEqualTo("ENETUNREACH"));
                }
            });
        }
    }

    @Test
    void onlinkRouteWithoutAnyAddressInTheNamespaceCarriesTheKernelMessage() throws Exception {
        try (TestNs t = TestNs.create("rte")) {
            t.ns.run(() -> {
                try (RtNetlink nl = RtNetlink.open()) {
                    nl.createVxlan(new VxlanSpec("flannel.1", 1, 0, InetAddress.getByName("192.0.2.1"), 0, false,
                            false, 0, null));
                    int vx = nl.link("flannel.1").orElseThrow().index();
                    nl.setUp(vx);
                    // a fresh namespace has no local table yet, so the kernel rejects the onlink gateway
                    assertThatThrownBy(() -> nl.replaceRoute(Route.onlink(PEER, InetAddress.getByName("10.244.2.0"), vx)))
                            .isInstanceOf(NetlinkException.class)
                            .hasMessage("RTM_NEWROUTE 10.244.2.0/24 via 10.244.2.0 dev flannel.1 onlink: EINVAL (22): "
                                    + "Nexthop has invalid gateway");
                }
            });
        }
    }
}
