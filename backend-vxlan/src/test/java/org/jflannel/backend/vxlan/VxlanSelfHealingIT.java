package org.jflannel.backend.vxlan;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import org.jflannel.core.LeaseEvent;
import org.jflannel.core.MacAddress;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.jflannel.testsupport.cluster.Wait;

/** Ours (REFERENCE §6.10): a deleted device comes back with every entry; a deleted entry comes back. */
@Tag("netns")
class VxlanSelfHealingIT {
    static final String ADDR = "192.0.2.1";
    static final String MAC_2 = "0e:00:00:00:00:02";
    static final String MAC_3 = "0e:00:00:00:00:03";
    static final MacAddress OWN = MacAddress.parse("0e:aa:00:00:00:01");
    static final Duration LIMIT = Duration.ofSeconds(20);

    @Test
    void deviceDeletedByHandIsRecreatedAndEveryEntryReplayed() throws Exception {
        try (Node node = Node.withUnderlay("vxh", ADDR)) {
            node.register("", "10.244.1.0/24", node.underlay("ul0", ADDR), OWN);
            node.apply(LeaseEvent.added(Leases.v4("10.244.2.0/24", "198.51.100.2", MAC_2)),
                    LeaseEvent.added(Leases.v4("10.244.3.0/24", "198.51.100.3", MAC_3)));
            int before = node.link("flannel.1").get("ifindex").asInt();

            node.ip("link", "del", "flannel.1");

            Wait.until("flannel.1 back with both routes", LIMIT, () -> {
                JsonNode l = node.link("flannel.1");
                return l != null && l.get("ifindex").asInt() != before && VxlanPeersIT.routes(node).size() == 2;
            });
            JsonNode l = node.link("flannel.1");
            assertThat(l.get("address").asText()).isEqualTo(OWN.toString());
            assertThat(l.get("mtu").asInt()).isEqualTo(1450);
            assertThat(l.get("flags").toString()).contains("\"UP\"");
            assertThat(l.get("linkinfo").get("info_data").get("local").asText()).isEqualTo(ADDR);
            assertThat(node.ipJson("addr", "show", "dev", "flannel.1").get(0).get("addr_info").findValuesAsText("local"))
                    .contains("10.244.1.0");
            assertThat(VxlanPeersIT.neighbours(node)).containsExactlyInAnyOrder(
                    "10.244.2.0 " + MAC_2 + " [\"PERMANENT\"]", "10.244.3.0 " + MAC_3 + " [\"PERMANENT\"]");
            assertThat(VxlanPeersIT.fdb(node)).containsExactlyInAnyOrder(
                    MAC_2 + " 198.51.100.2 [\"self\"] permanent", MAC_3 + " 198.51.100.3 [\"self\"] permanent");
            assertThat(VxlanPeersIT.routes(node)).containsExactlyInAnyOrder(
                    "10.244.2.0/24 via 10.244.2.0 boot global [\"onlink\"]", "10.244.3.0/24 via 10.244.3.0 boot global [\"onlink\"]");
            assertThat(node.network.counters().deviceRecreations()).isEqualTo(1);
        }
    }

    @Test
    void underlayDeletedAndAddedBackBringsTheDeviceBackAfterBackOff() throws Exception {
        try (Node node = Node.withUnderlay("vxh", ADDR)) {
            node.register("", "10.244.1.0/24", node.underlay("ul0", ADDR), OWN);
            node.apply(LeaseEvent.added(Leases.v4("10.244.3.0/24", "198.51.100.3", MAC_3)));

            node.ip("link", "del", "ul0"); // the kernel deletes flannel.1 with its lower device
            Wait.until("a failed re-creation", LIMIT,
                    () -> node.network.counters().errors(VxlanCounters.ErrorKind.DEVICE) >= 2);
            assertThat(node.link("flannel.1")).isNull();

            node.ip("link", "add", "ul0", "type", "veth", "peer", "name", "ul0p");
            node.ip("addr", "add", ADDR + "/24", "dev", "ul0");
            node.ip("link", "set", "ul0", "up");
            node.ip("link", "set", "ul0p", "up");

            Wait.until("flannel.1 back on the new ul0 with its route", LIMIT, () -> node.link("flannel.1") != null
                    && VxlanPeersIT.routes(node).size() == 1);
            assertThat(node.link("flannel.1").get("linkinfo").get("info_data").get("link").asText()).isEqualTo("ul0");
            assertThat(VxlanPeersIT.fdb(node)).containsExactly(MAC_3 + " 198.51.100.3 [\"self\"] permanent");
        }
    }

    @Test
    void routeDeletedByHandComesBackThroughTheEvent() throws Exception {
        try (Node node = Node.withUnderlay("vxh", ADDR)) {
            node.register("", "10.244.1.0/24", node.underlay("ul0", ADDR), OWN);
            node.apply(LeaseEvent.added(Leases.v4("10.244.3.0/24", "198.51.100.3", MAC_3)));

            node.ip("route", "del", "10.244.3.0/24"); // matches a route through a nexthop object (the default) too
            node.bridge("fdb", "del", MAC_3, "dev", "flannel.1", "dst", "198.51.100.3", "self");

            // no periodic reconcile in these settings: only the netlink event can bring them back
            Wait.until("route and fdb entry back", LIMIT, () -> VxlanPeersIT.routes(node).size() == 1
                    && VxlanPeersIT.fdb(node).size() == 1);
            assertThat(VxlanPeersIT.routes(node)).containsExactly("10.244.3.0/24 via 10.244.3.0 boot global [\"onlink\"]");
            assertThat(VxlanPeersIT.fdb(node)).containsExactly(MAC_3 + " 198.51.100.3 [\"self\"] permanent");
            // entries come back in the middle of the pass; the counter moves when the pass ends
            Wait.until("repairs counted", LIMIT, () -> node.network.counters().repairs() >= 2);
        }
    }

    @Test
    void deviceSetDownByHandComesBackUpWithItsEntries() throws Exception {
        try (Node node = Node.withUnderlay("vxh", ADDR)) {
            node.register("", "10.244.1.0/24", node.underlay("ul0", ADDR), OWN);
            node.apply(LeaseEvent.added(Leases.v4("10.244.3.0/24", "198.51.100.3", MAC_3)));

            node.ip("link", "set", "flannel.1", "down"); // the kernel flushes the device's routes with it

            Wait.until("flannel.1 up with its route", LIMIT, () -> node.link("flannel.1").get("flags").toString().contains("\"UP\"")
                    && VxlanPeersIT.routes(node).size() == 1);
            assertThat(VxlanPeersIT.routes(node)).containsExactly("10.244.3.0/24 via 10.244.3.0 boot global [\"onlink\"]");
            assertThat(VxlanPeersIT.neighbours(node)).containsExactly("10.244.3.0 " + MAC_3 + " [\"PERMANENT\"]");
        }
    }

    @Test
    void addressRemovedByHandComesBack() throws Exception {
        try (Node node = Node.withUnderlay("vxh", ADDR)) {
            node.register("", "10.244.1.0/24", node.underlay("ul0", ADDR), OWN);
            node.apply();
            node.ip("addr", "del", "10.244.1.0/32", "dev", "flannel.1");

            Wait.until("address back", LIMIT, () -> node.ipJson("addr", "show", "dev", "flannel.1").get(0)
                    .path("addr_info").findValuesAsText("local").contains("10.244.1.0"));
        }
    }
}
