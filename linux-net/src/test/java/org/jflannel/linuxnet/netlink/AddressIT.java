package org.jflannel.linuxnet.netlink;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.fasterxml.jackson.databind.JsonNode;
import java.util.ArrayList;
import java.util.List;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.TestNs;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("netns")
class AddressIT {

    @Test
    void addReplaceListAndDeleteBothFamilies() throws Exception {
        try (TestNs t = TestNs.create("adr")) {
            Witness ip = new Witness(t);
            t.ns.run(() -> {
                try (RtNetlink nl = RtNetlink.open()) {
                    nl.createBridge("br0");
                    int br = nl.link("br0").orElseThrow().index();
                    nl.addAddress(br, IpPrefix.parse("10.244.1.1/24"));
                    nl.replaceAddress(br, IpPrefix.parse("10.244.1.1/24"));
                    nl.replaceAddress(br, IpPrefix.parse("fd00:1::1/64"));

                    assertThat(nl.addresses(br)).extracting(Address::prefix)
                            .contains(IpPrefix.parse("10.244.1.1/24"), IpPrefix.parse("fd00:1::1/64"));
                    assertThat(witness(ip)).contains("10.244.1.1/24", "fd00:1::1/64");

                    assertThatThrownBy(() -> nl.addAddress(br, IpPrefix.parse("10.244.1.1/24")))
                            .isInstanceOfSatisfying(NetlinkException.class, e -> assertThat(e.errno()).isEqualTo(17))
                            .hasMessageStartingWith("RTM_NEWADDR 10.244.1.1/24 dev br0: EEXIST (17)");

                    nl.deleteAddress(br, IpPrefix.parse("10.244.1.1/24"));
                    nl.deleteAddress(br, IpPrefix.parse("10.244.1.1/24")); // quiet when gone
                    nl.deleteAddress(br, IpPrefix.parse("fd00:1::1/64"));
                    assertThat(nl.addresses(br)).extracting(Address::prefix)
                            .doesNotContain(IpPrefix.parse("10.244.1.1/24"), IpPrefix.parse("fd00:1::1/64"));
                    assertThat(witness(ip)).doesNotContain("10.244.1.1/24", "fd00:1::1/64");
                }
            });
        }
    }

    private static List<String> witness(Witness ip) throws Exception {
        List<String> out = new ArrayList<>();
        for (JsonNode a : ip.json("ip", "-j", "addr", "show", "dev", "br0").get(0).get("addr_info")) {
            out.add(a.get("local").asText() + "/" + a.get("prefixlen").asInt());
        }
        return out;
    }
}
