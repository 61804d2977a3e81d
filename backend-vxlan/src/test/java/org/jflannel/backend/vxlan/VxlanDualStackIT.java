package org.jflannel.backend.vxlan;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.util.ArrayList;
import java.util.List;
import org.jflannel.core.ExternalInterface;
import org.jflannel.core.LeaseEvent;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Dual stack: flannel.1 and flannel-v6.1, one set of entries per family. */
@Tag("netns")
class VxlanDualStackIT {
    static final String CONF = "{\"EnableIPv6\":true,\"Network\":\"10.244.0.0/16\",\"IPv6Network\":\"fd00:42::/56\","
            + "\"Backend\":{\"Type\":\"vxlan\"}}";

    @Test
    void dualStackCreatesBothDevicesAndProgramsBothFamilies() throws Exception {
        try (Node node = Node.withUnderlay("vx6", "192.0.2.1")) {
            node.ip("addr", "add", "2001:db8::1/64", "dev", "ul0", "nodad");
            JsonNode ul = node.link("ul0");
            ExternalInterface ext = new ExternalInterface("ul0", ul.get("ifindex").asInt(), 1500,
                    (Inet4Address) Leases.ip("192.0.2.1"), (Inet6Address) Leases.ip("2001:db8::1"), null, null);

            node.registerWith(CONF, "10.244.1.0/24", "fd00:42:1::/64", ext);

            JsonNode v6 = node.link("flannel-v6.1");
            assertThat(v6.get("linkinfo").get("info_data").get("local6").asText()).isEqualTo("2001:db8::1");
            // the kernel caps an IPv6-underlay VTEP at underlay − 70 whatever we ask (upstream gets the same);
            // FLANNEL_MTU stays MTU − 50 as upstream computes it
            assertThat(v6.get("mtu").asInt()).isEqualTo(1430);
            assertThat(node.network.mtu()).isEqualTo(1450);
            assertThat(node.ipJson("addr", "show", "dev", "flannel-v6.1").get(0).get("addr_info").findValuesAsText("local"))
                    .contains("fd00:42:1::");
            assertThat(node.exec("cat", "/proc/sys/net/ipv6/conf/flannel-v6.1/accept_ra").strip()).isEqualTo("0");
            assertThat(node.subnets.published().backendV6Data()).isEqualTo(
                    "{\"VNI\":1,\"VtepMAC\":\"" + v6.get("address").asText() + "\"}");
            assertThat(node.subnets.published().publicIpv6().getHostAddress()).isEqualTo("2001:db8:0:0:0:0:0:1");

            node.apply(LeaseEvent.added(Leases.dual("10.244.2.0/24", "198.51.100.2", "0e:00:00:00:00:02",
                    "fd00:42:2::/64", "2001:db8::2", "0e:00:00:00:00:62")));

            assertThat(VxlanPeersIT.routes(node)).containsExactly("10.244.2.0/24 via 10.244.2.0 boot global [\"onlink\"]");
            List<String> routes6 = new ArrayList<>();
            for (JsonNode r : node.ipJson("-6", "route", "show", "dev", "flannel-v6.1")) {
                if (r.has("gateway")) {
                    routes6.add(r.get("dst").asText() + " via " + r.get("gateway").asText() + " " + r.get("flags"));
                }
            }
            assertThat(routes6).containsExactly("fd00:42:2::/64 via fd00:42:2:: [\"onlink\"]");
            JsonNode neigh6 = node.ipJson("-6", "neigh", "show", "dev", "flannel-v6.1");
            assertThat(neigh6.findValuesAsText("lladdr")).containsExactly("0e:00:00:00:00:62");
            JsonNode fdb6 = node.bridgeJson("fdb", "show", "dev", "flannel-v6.1");
            assertThat(fdb6.findValuesAsText("dst")).containsExactly("2001:db8::2");

            node.apply(LeaseEvent.removed(Leases.dual("10.244.2.0/24", "198.51.100.2", "0e:00:00:00:00:02",
                    "fd00:42:2::/64", "2001:db8::2", "0e:00:00:00:00:62")));
            assertThat(node.bridgeJson("fdb", "show", "dev", "flannel-v6.1")).isEmpty();
            assertThat(node.ipJson("-6", "neigh", "show", "dev", "flannel-v6.1")).isEmpty();
            assertThat(VxlanPeersIT.routes(node)).isEmpty();

            // a restart adopts both devices (the capped MTU is not a reason to fail or recreate)
            int index6 = v6.get("ifindex").asInt();
            node.network.close();
            node.registerWith(CONF, "10.244.1.0/24", "fd00:42:1::/64", ext);
            assertThat(node.link("flannel-v6.1").get("ifindex").asInt()).isEqualTo(index6);
            assertThat(node.link("flannel-v6.1").get("address").asText()).isEqualTo(v6.get("address").asText());
        }
    }
}
