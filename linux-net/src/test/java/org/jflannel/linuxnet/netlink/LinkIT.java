package org.jflannel.linuxnet.netlink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.InetAddress;
import org.jflannel.core.MacAddress;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.TestNs;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Links in a throwaway namespace, each checked through our dump and through `ip -d -j link show`. */
@Tag("netns")
class LinkIT {
    private static final MacAddress MAC = MacAddress.parse("0e:11:22:33:44:55");
    private TestNs t;
    private Witness ip;

    @BeforeEach
    void namespace() throws Exception {
        t = TestNs.create("lnk");
        ip = new Witness(t);
    }

    @AfterEach
    void cleanup() throws Exception {
        t.close();
    }

    private int underlay(RtNetlink nl) throws Exception {
        nl.createVeth("ext0", "ext0p");
        return nl.link("ext0").orElseThrow().index();
    }

    @Test
    void vxlanCreatedWithFlannelAttributesReadsBackAllOfThem() throws Exception {
        t.ns.run(() -> {
            try (RtNetlink nl = RtNetlink.open()) {
                int ext = underlay(nl);
                InetAddress local = InetAddress.getByName("192.0.2.10");
                nl.createVxlan(new VxlanSpec("flannel.1", 1, ext, local, 8472, false, false, 1450, MAC));

                Link l = nl.link("flannel.1").orElseThrow();
                assertThat(l.kind()).isEqualTo("vxlan");
                assertThat(l.mtu()).isEqualTo(1450);
                assertThat(l.mac()).isEqualTo(MAC);
                assertThat(l.up()).isFalse();
                assertThat(l.vxlan()).isEqualTo(new VxlanInfo(1, ext, local, null, 8472, false, false, false, false,
                        false, false, 0, 0, false, false));
                assertThat(nl.links()).contains(l);

                JsonNode w = ip.link("flannel.1");
                JsonNode d = w.at("/linkinfo/info_data");
                assertThat(w.get("ifindex").asInt()).isEqualTo(l.index());
                assertThat(w.get("mtu").asInt()).isEqualTo(l.mtu());
                assertThat(w.get("address").asText()).isEqualTo(l.mac().toString());
                assertThat(d.get("id").asInt()).isEqualTo(l.vxlan().vni());
                assertThat(d.get("local").asText()).isEqualTo("192.0.2.10");
                assertThat(d.get("link").asText()).isEqualTo("ext0");
                assertThat(d.get("port").asInt()).isEqualTo(l.vxlan().port());
                assertThat(d.get("learning").asBoolean()).isEqualTo(l.vxlan().learning());
                assertThat(d.get("ttl").asInt()).isEqualTo(l.vxlan().ttl());
                assertThat(d.get("udp_zero_csum6_tx").asBoolean()).isFalse();
                assertThat(d.get("udp_zero_csum6_rx").asBoolean()).isFalse();
                // iproute2 prints these keys only when the option is on
                assertThat(d.has("proxy") || d.has("rsc") || d.has("l2miss") || d.has("l3miss") || d.has("gbp")
                        || d.has("group")).isFalse();
            }
        });
    }

    @Test
    void vxlanWithGbpIpv6LocalAndDefaultPortReadsBack() throws Exception {
        t.ns.run(() -> {
            try (RtNetlink nl = RtNetlink.open()) {
                InetAddress local = InetAddress.getByName("fd00::10");
                nl.createVxlan(new VxlanSpec("flannel-v6.7", 7, 0, local, 0, true, true, 0, null));

                Link l = nl.link("flannel-v6.7").orElseThrow();
                assertThat(l.vxlan()).isEqualTo(new VxlanInfo(7, 0, local, null, 8472, true, true, false, false,
                        false, false, 0, 0, false, false));
                assertThat(l.mac()).isNotNull();

                JsonNode d = ip.link("flannel-v6.7").at("/linkinfo/info_data");
                assertThat(d.get("local6").asText()).isEqualTo("fd00::10");
                assertThat(d.get("gbp").asBoolean()).isTrue();
                assertThat(d.get("learning").asBoolean()).isTrue();
                assertThat(d.get("port").asInt()).isEqualTo(8472);
            }
        });
    }

    @Test
    void secondCreateFailsWithEexistNamingTheDevice() throws Exception {
        t.ns.run(() -> {
            try (RtNetlink nl = RtNetlink.open()) {
                VxlanSpec spec = new VxlanSpec("flannel.1", 1, 0, InetAddress.getByName("192.0.2.10"), 0, false, false,
                        0, null);
                nl.createVxlan(spec);
                assertThatThrownBy(() -> nl.createVxlan(spec))
                        .isInstanceOfSatisfying(NetlinkException.class, e -> {
                            assertThat(e.errno()).isEqualTo(17);
                            assertThat(e.errnoName()).isEqualTo("EEXIST");
                            assertThat(e.operation()).isEqualTo("RTM_NEWLINK");
                            assertThat(e.object()).startsWith("flannel.1");
                        })
                        .hasMessageStartingWith("RTM_NEWLINK flannel.1 type vxlan id 1: EEXIST (17)");
            }
        });
    }

    @Test
    void setUpMtuMacAndLearningShowInBothViews() throws Exception {
        t.ns.run(() -> {
            try (RtNetlink nl = RtNetlink.open()) {
                nl.createVxlan(new VxlanSpec("vx0", 5, 0, InetAddress.getByName("192.0.2.10"), 4789, false, false, 0, null));
                int idx = nl.link("vx0").orElseThrow().index();
                MacAddress mac = MacAddress.parse("0e:aa:bb:cc:dd:ee");
                nl.setMtu(idx, 1400);
                nl.setMac(idx, mac);
                nl.setVxlanLearning(idx, true);
                nl.setUp(idx);

                Link l = nl.link(idx).orElseThrow();
                assertThat(l.up()).isTrue();
                assertThat(l.mtu()).isEqualTo(1400);
                assertThat(l.mac()).isEqualTo(mac);
                assertThat(l.vxlan().learning()).isTrue();
                assertThat(l.vxlan().port()).isEqualTo(4789);
                JsonNode w = ip.link("vx0");
                assertThat(w.get("flags").toString()).contains("\"UP\"");
                assertThat(w.get("mtu").asInt()).isEqualTo(1400);
                assertThat(w.get("address").asText()).isEqualTo("0e:aa:bb:cc:dd:ee");
                assertThat(w.at("/linkinfo/info_data/learning").asBoolean()).isTrue();
                assertThat(w.at("/linkinfo/info_data/port").asInt()).isEqualTo(4789);

                nl.setDown(idx);
                assertThat(nl.link(idx).orElseThrow().up()).isFalse();
                assertThat(ip.link("vx0").get("flags").toString()).doesNotContain("\"UP\"");
            }
        });
    }

    @Test
    void deleteIsQuietWhenTheLinkIsAlreadyGone() throws Exception {
        t.ns.run(() -> {
            try (RtNetlink nl = RtNetlink.open()) {
                nl.createBridge("br0");
                int idx = nl.link("br0").orElseThrow().index();
                nl.deleteLink("br0");
                assertThat(nl.link("br0")).isEmpty();
                assertThat(nl.link(idx)).isEmpty();
                assertThat(ip.linkExists("br0")).isFalse();
                nl.deleteLink("br0");
                nl.deleteLink(idx);
            }
        });
    }

    @Test
    void vethJoinsBridgeAndMovesToAnotherNamespace() throws Exception {
        try (TestNs other = TestNs.create("lnk2")) {
            t.ns.run(() -> {
                try (RtNetlink nl = RtNetlink.open()) {
                    nl.createBridge("br0");
                    nl.createVeth("ve0", "ve1");
                    int br = nl.link("br0").orElseThrow().index();
                    nl.setMaster(nl.link("ve0").orElseThrow().index(), br);
                    assertThat(ip.link("ve0").get("master").asText()).isEqualTo("br0");
                    assertThat(nl.link("ve0").orElseThrow().kind()).isEqualTo("veth");
                    assertThat(nl.link("br0").orElseThrow().kind()).isEqualTo("bridge");

                    nl.moveToNetns(nl.link("ve1").orElseThrow().index(), other.ns);
                    assertThat(nl.link("ve1")).isEmpty();
                }
            });
            Link moved = other.ns.call(() -> {
                try (RtNetlink nl = RtNetlink.open()) {
                    return nl.link("ve1").orElseThrow();
                }
            });
            assertThat(moved.kind()).isEqualTo("veth");
            assertThat(new Witness(other).link("ve1").get("ifindex").asInt()).isEqualTo(moved.index());
        }
    }

    @Test
    void badInputGivesClearErrors() throws Exception {
        t.ns.run(() -> {
            try (RtNetlink nl = RtNetlink.open()) {
                assertThatThrownBy(() -> nl.createBridge("a-name-of-16-chr"))
                        .isInstanceOf(IllegalArgumentException.class)
                        .hasMessageContaining("longer than 15");
                assertThatThrownBy(() -> nl.setUp(9999))
                        .isInstanceOfSatisfying(NetlinkException.class, e -> assertThat(e.errnoName()).isEqualTo("ENODEV"))
                        .hasMessageContaining("dev #9999");
                assertThat(nl.link("nosuchdev")).isEmpty();
            }
        });
    }
}
