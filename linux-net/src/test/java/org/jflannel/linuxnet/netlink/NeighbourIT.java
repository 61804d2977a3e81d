package org.jflannel.linuxnet.netlink;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.InetAddress;
import org.jflannel.core.MacAddress;
import org.jflannel.linuxnet.TestNs;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("netns")
class NeighbourIT {
    private static final MacAddress PEER_MAC = MacAddress.parse("0e:00:00:00:02:02");

    @Test
    void neighbourReplaceIsIdempotentAndDeleteIsQuiet() throws Exception {
        try (TestNs t = TestNs.create("ngh")) {
            Witness ip = new Witness(t);
            t.ns.run(() -> {
                try (RtNetlink nl = RtNetlink.open()) {
                    VxlanNode node = VxlanNode.setUp(nl);
                    Neighbour n = Neighbour.permanent(node.vxlan, InetAddress.getByName("10.244.2.0"), PEER_MAC);
                    Neighbour n6 = Neighbour.permanent(node.vxlan, InetAddress.getByName("fd00:2::"), PEER_MAC);
                    nl.replaceNeighbour(n);
                    nl.replaceNeighbour(n);
                    nl.replaceNeighbour(n6);

                    assertThat(nl.neighbours(node.vxlan)).contains(n, n6);
                    JsonNode w = ip.json("ip", "-j", "neigh", "show", "dev", "flannel.1", "to", "10.244.2.0").get(0);
                    assertThat(w.get("lladdr").asText()).isEqualTo(PEER_MAC.toString());
                    assertThat(w.get("state").toString()).contains("PERMANENT");
                    assertThat(ip.json("ip", "-j", "-6", "neigh", "show", "dev", "flannel.1")).hasSize(1);

                    Neighbour moved = Neighbour.permanent(node.vxlan, n.ip(), MacAddress.parse("0e:00:00:00:02:03"));
                    nl.replaceNeighbour(moved);
                    assertThat(nl.neighbours(node.vxlan)).contains(moved).doesNotContain(n);

                    nl.deleteNeighbour(moved);
                    nl.deleteNeighbour(moved);
                    nl.deleteNeighbour(n6);
                    // the kernel keeps its own NOARP multicast entry (ff02::16, MLD); ours are gone
                    assertThat(nl.neighbours(node.vxlan)).noneMatch(x -> x.state() == Neighbour.NUD_PERMANENT);
                    assertThat(ip.json("ip", "-j", "neigh", "show", "dev", "flannel.1")).isEmpty();
                }
            });
        }
    }

    @Test
    void fdbReplaceIsIdempotentAndDeleteIsQuiet() throws Exception {
        try (TestNs t = TestNs.create("fdb")) {
            Witness ip = new Witness(t);
            t.ns.run(() -> {
                try (RtNetlink nl = RtNetlink.open()) {
                    VxlanNode node = VxlanNode.setUp(nl);
                    FdbEntry e = new FdbEntry(node.vxlan, PEER_MAC, InetAddress.getByName("192.0.2.2"));
                    nl.replaceFdb(e);
                    nl.replaceFdb(e);
                    assertThat(nl.fdb(node.vxlan)).containsExactly(e);
                    JsonNode w = ip.json("bridge", "-j", "fdb", "show", "dev", "flannel.1").get(0);
                    assertThat(w.get("mac").asText()).isEqualTo(PEER_MAC.toString());
                    assertThat(w.get("dst").asText()).isEqualTo("192.0.2.2");
                    assertThat(w.get("flags").toString()).contains("self");
                    assertThat(w.get("state").asText()).isEqualTo("permanent");

                    FdbEntry moved = new FdbEntry(node.vxlan, PEER_MAC, InetAddress.getByName("192.0.2.3"));
                    nl.replaceFdb(moved);
                    assertThat(nl.fdb(node.vxlan)).containsExactly(moved);

                    nl.deleteFdb(moved);
                    nl.deleteFdb(moved);
                    assertThat(nl.fdb(node.vxlan)).isEmpty();
                    assertThat(ip.json("bridge", "-j", "fdb", "show", "dev", "flannel.1")).isEmpty();
                }
            });
        }
    }
}
