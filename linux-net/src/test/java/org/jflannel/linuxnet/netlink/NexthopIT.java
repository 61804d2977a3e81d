package org.jflannel.linuxnet.netlink;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.InetAddress;
import java.util.List;
import org.jflannel.linuxnet.TestNs;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Nexthop objects and routes through them on the real kernel, iproute2 as the witness. */
@Tag("netns")
class NexthopIT {
    private static final IpPrefix PEER = IpPrefix.parse("10.244.3.0/24");
    private static final int ID = 0x0af40300;

    /** The IPv4 routes (the kernel adds fe80::/64 on the device). */
    private static List<Route> v4(List<Route> routes) {
        return routes.stream().filter(Route::isIpv4).toList();
    }

    @Test
    void aRouteThroughANexthopIsWrittenDumpedAndDeleted() throws Exception {
        try (TestNs t = TestNs.create("nhr")) {
            Witness ip = new Witness(t);
            t.ns.run(() -> {
                try (RtNetlink nl = RtNetlink.open()) {
                    VxlanNode node = VxlanNode.setUp(nl);
                    Nexthop nh = Nexthop.onlink(ID, InetAddress.getByName("10.244.3.0"), node.vxlan);
                    Route r = Route.through(PEER, nh);
                    nl.replaceNexthop(nh);
                    nl.replaceNexthop(nh); // idempotent
                    nl.replaceRoute(r);
                    nl.replaceRoute(r);

                    assertThat(nl.nexthops(node.vxlan)).containsExactly(nh);
                    assertThat(nl.nexthops(node.ext)).isEmpty();
                    // the dump describes the route with the nexthop's gateway, device and onlink flag
                    assertThat(v4(nl.routesOf(node.vxlan))).containsExactly(r);
                    JsonNode w = ip.json("ip", "-j", "route", "show", "10.244.3.0/24").get(0);
                    assertThat(w.get("nhid").asLong()).isEqualTo(ID);
                    assertThat(w.get("gateway").asText()).isEqualTo("10.244.3.0");
                    assertThat(w.get("dev").asText()).isEqualTo("flannel.1");
                    JsonNode n = ip.json("ip", "-j", "nexthop", "show", "id", Integer.toString(ID)).get(0);
                    assertThat(n.get("gateway").asText()).isEqualTo("10.244.3.0");
                    assertThat(n.get("flags").toString()).contains("onlink");

                    nl.deleteRoute(r);
                    nl.deleteRoute(r); // quiet when gone
                    assertThat(v4(nl.routesOf(node.vxlan))).isEmpty();
                    assertThat(nl.nexthops(node.vxlan)).containsExactly(nh); // a nexthop outlives its routes
                    nl.deleteNexthop(ID);
                    nl.deleteNexthop(ID);
                    assertThat(nl.nexthops(node.vxlan)).isEmpty();
                    assertThat(ip.json("ip", "-j", "nexthop", "show")).isEmpty();
                }
            });
        }
    }

    @Test
    void aPlainReplaceTakesOverARouteThroughANexthopAndANexthopsDeletionTakesItsRoutes() throws Exception {
        try (TestNs t = TestNs.create("nhr")) {
            t.ns.run(() -> {
                try (RtNetlink nl = RtNetlink.open()) {
                    VxlanNode node = VxlanNode.setUp(nl);
                    InetAddress gw = InetAddress.getByName("10.244.3.0");
                    Nexthop nh = Nexthop.onlink(ID, gw, node.vxlan);
                    nl.replaceNexthop(nh);
                    nl.replaceRoute(Route.through(PEER, nh));

                    // what upstream flanneld's RouteReplace does to our route: the route becomes a plain one
                    Route plain = Route.onlink(PEER, gw, node.vxlan);
                    nl.replaceRoute(plain);
                    assertThat(v4(nl.routesOf(node.vxlan))).containsExactly(plain);
                    // and back: ours replaces the plain route in place
                    nl.replaceRoute(Route.through(PEER, nh));
                    assertThat(v4(nl.routesOf(node.vxlan))).extracting(Route::nexthopId).containsExactly(ID);

                    nl.deleteNexthop(ID);
                    assertThat(v4(nl.routesOf(node.vxlan))).isEmpty();
                }
            });
        }
    }

    @Test
    void aBatchWritesNexthopsThenRoutesAndDeletesThem() throws Exception {
        try (TestNs t = TestNs.create("nhb")) {
            t.ns.run(() -> {
                try (RtNetlink nl = RtNetlink.open()) {
                    VxlanNode node = VxlanNode.setUp(nl);
                    Batch write = nl.batch();
                    Batch routes = nl.batch();
                    Batch delete = nl.batch();
                    for (int i = 2; i < 302; i++) {
                        InetAddress gw = InetAddress.getByName("10.245." + i / 256 + "." + i % 256);
                        Nexthop nh = Nexthop.onlink(1000 + i, gw, node.vxlan);
                        write.replaceNexthop(nh);
                        routes.replaceRoute(Route.through(new IpPrefix(gw, 32), nh));
                        delete.deleteNexthop(nh);
                    }
                    assertThat(write.execute().errors()).isEmpty();
                    assertThat(routes.execute().errors()).isEmpty();
                    List<Route> dumped = v4(nl.routesOf(node.vxlan));
                    assertThat(dumped).hasSize(300).allMatch(r -> r.nexthopId() > 1000 && r.onlink());
                    assertThat(nl.nexthops(node.vxlan)).hasSize(300);

                    assertThat(delete.execute().errors()).isEmpty();
                    assertThat(delete.execute().errors()).isEmpty(); // quiet when gone
                    assertThat(nl.nexthops(node.vxlan)).isEmpty();
                    assertThat(v4(nl.routesOf(node.vxlan))).isEmpty();
                }
            });
        }
    }
}
