package org.jflannel.backend.vxlan;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import org.jflannel.core.MacAddress;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** register(): the device, its address and the published lease, against iproute2 as the witness. */
@Tag("netns")
class VxlanDeviceIT {
    static final String ADDR = "192.0.2.1";
    static final MacAddress STORED = MacAddress.parse("0e:aa:bb:cc:dd:01");

    @Test
    void registerCreatesTheDeviceWithUpstreamAttributes() throws Exception {
        try (Node node = Node.withUnderlay("vxd", ADDR); Node ref = Node.withUnderlay("vxr", ADDR)) {
            VxlanNetwork net = node.register("", "10.244.1.0/24", node.underlay("ul0", ADDR), STORED);

            // the same device made by iproute2 with upstream's equivalent command (REFERENCE §6.1)
            ref.ip("link", "add", "flannel.1", "address", STORED.toString(), "mtu", "1450", "type", "vxlan", "id", "1",
                    "local", ADDR, "dev", "ul0", "nolearning", "ttl", "0", "tos", "0", "noproxy", "norsc", "nol2miss",
                    "nol3miss", "noudp6zerocsumtx", "noudp6zerocsumrx");
            JsonNode ours = node.link("flannel.1");
            JsonNode theirs = ref.link("flannel.1");
            assertThat(ours.get("linkinfo")).isEqualTo(theirs.get("linkinfo"));
            assertThat(ours.get("linkinfo").get("info_data").get("port").asInt()).isEqualTo(8472);
            assertThat(ours.get("mtu").asInt()).isEqualTo(1450);
            assertThat(ours.get("address").asText()).isEqualTo(STORED.toString());
            assertThat(ours.get("flags").toString()).contains("\"UP\"");

            JsonNode addrs = node.ipJson("addr", "show", "dev", "flannel.1").get(0).get("addr_info");
            assertThat(addrs.findValuesAsText("local")).contains("10.244.1.0");
            assertThat(addrs.get(0).get("prefixlen").asInt()).isEqualTo(32);
            assertThat(node.exec("cat", "/proc/sys/net/ipv6/conf/flannel.1/accept_ra").strip()).isEqualTo("0");

            assertThat(node.subnets.published().backendType()).isEqualTo("vxlan");
            assertThat(node.subnets.published().backendData()).isEqualTo("{\"VNI\":1,\"VtepMAC\":\"0e:aa:bb:cc:dd:01\"}");
            assertThat(node.subnets.published().publicIp().getHostAddress()).isEqualTo(ADDR);
            assertThat(net.mtu()).isEqualTo(1450);
        }
    }

    @Test
    void portGbpLearningAndMtuFromTheConfig() throws Exception {
        try (Node node = Node.withUnderlay("vxd", ADDR)) {
            node.register(",\"VNI\":7,\"Port\":4789,\"GBP\":true,\"Learning\":true,\"MTU\":1400", "10.244.1.0/24",
                    node.underlay("ul0", ADDR), null);
            JsonNode l = node.link("flannel.7");
            JsonNode data = l.get("linkinfo").get("info_data");
            assertThat(data.get("id").asInt()).isEqualTo(7);
            assertThat(data.get("port").asInt()).isEqualTo(4789);
            assertThat(data.get("learning").asBoolean()).isTrue();
            assertThat(data.has("gbp")).isTrue();
            assertThat(l.get("mtu").asInt()).isEqualTo(1350);
            String mac = l.get("address").asText();
            assertThat(Integer.parseInt(mac.substring(0, 2), 16) & 0x03).isEqualTo(0x02); // random, local, unicast
            assertThat(node.subnets.published().backendData()).isEqualTo("{\"VNI\":7,\"VtepMAC\":\"" + mac + "\"}");
        }
    }

    @Test
    void adoptsACompatibleDeviceKeepingItsMac() throws Exception {
        try (Node node = Node.withUnderlay("vxd", ADDR)) {
            node.ip("link", "add", "flannel.1", "address", "0e:00:00:00:00:77", "mtu", "1450", "type", "vxlan", "id", "1",
                    "local", ADDR, "dev", "ul0", "dstport", "8472", "nolearning");
            int index = node.link("flannel.1").get("ifindex").asInt();

            node.register("", "10.244.1.0/24", node.underlay("ul0", ADDR), STORED);

            JsonNode l = node.link("flannel.1");
            assertThat(l.get("ifindex").asInt()).isEqualTo(index);
            assertThat(l.get("address").asText()).isEqualTo("0e:00:00:00:00:77");
            assertThat(node.subnets.published().backendData()).contains("0e:00:00:00:00:77");
        }
    }

    @Test
    void correctsMtuAndLearningInPlace() throws Exception {
        try (Node node = Node.withUnderlay("vxd", ADDR)) {
            node.ip("link", "add", "flannel.1", "mtu", "1300", "type", "vxlan", "id", "1", "local", ADDR, "dev", "ul0",
                    "dstport", "8472", "learning");
            int index = node.link("flannel.1").get("ifindex").asInt();

            node.register("", "10.244.1.0/24", node.underlay("ul0", ADDR), null);

            JsonNode l = node.link("flannel.1");
            assertThat(l.get("ifindex").asInt()).isEqualTo(index);
            assertThat(l.get("mtu").asInt()).isEqualTo(1450);
            assertThat(l.get("linkinfo").get("info_data").get("learning").asBoolean()).isFalse();
        }
    }

    @Test
    void recreatesAnIncompatibleDevice() throws Exception {
        try (Node node = Node.withUnderlay("vxd", ADDR)) {
            node.ip("link", "add", "flannel.1", "type", "vxlan", "id", "1", "local", ADDR, "dev", "ul0",
                    "dstport", "8472", "l2miss");
            int index = node.link("flannel.1").get("ifindex").asInt();

            node.register("", "10.244.1.0/24", node.underlay("ul0", ADDR), STORED);

            JsonNode l = node.link("flannel.1");
            assertThat(l.get("ifindex").asInt()).isNotEqualTo(index);
            assertThat(l.get("linkinfo").get("info_data").has("l2miss")).isFalse();
            assertThat(l.get("address").asText()).isEqualTo(STORED.toString());
        }
    }

    @Test
    void removesOtherAddressesInsideTheNetworkOnly() throws Exception {
        try (Node node = Node.withUnderlay("vxd", ADDR)) {
            node.ip("link", "add", "flannel.1", "mtu", "1450", "type", "vxlan", "id", "1", "local", ADDR, "dev", "ul0",
                    "dstport", "8472", "nolearning");
            node.ip("addr", "add", "10.244.7.0/32", "dev", "flannel.1");
            node.ip("addr", "add", "172.16.0.1/32", "dev", "flannel.1");

            node.register("", "10.244.1.0/24", node.underlay("ul0", ADDR), null);

            JsonNode addrs = node.ipJson("-4", "addr", "show", "dev", "flannel.1").get(0).get("addr_info");
            assertThat(addrs.findValuesAsText("local")).containsExactlyInAnyOrder("10.244.1.0", "172.16.0.1");
        }
    }
}
