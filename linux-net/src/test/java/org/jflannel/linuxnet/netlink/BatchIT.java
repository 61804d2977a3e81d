package org.jflannel.linuxnet.netlink;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import org.jflannel.core.MacAddress;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.TestNs;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

@Tag("netns")
class BatchIT {
    private static final int PEERS = 1000;

    @Test
    void aThousandTriplesInOneBatchAndTheFailingRequestReportsItsOwnError() throws Exception {
        try (TestNs t = TestNs.create("bat")) {
            t.ns.run(() -> {
                try (RtNetlink nl = RtNetlink.open()) {
                    VxlanNode node = VxlanNode.setUp(nl);
                    Batch b = nl.batch();
                    int bad = -1;
                    int gone = -1;
                    for (int i = 0; i < PEERS; i++) {
                        InetAddress subnet = InetAddress.getByAddress(new byte[] {10, (byte) (100 + (i >> 8)), (byte) i, 0});
                        MacAddress mac = new MacAddress(0x0e0000000000L | i);
                        b.replaceNeighbour(Neighbour.permanent(node.vxlan, subnet, mac));
                        b.replaceFdb(new FdbEntry(node.vxlan, mac,
                                InetAddress.getByAddress(new byte[] {(byte) 192, 0, 2, (byte) (2 + i % 250)})));
                        b.replaceRoute(Route.onlink(new IpPrefix(subnet, 24), subnet, node.vxlan));
                        if (i == PEERS / 2) {
                            // not onlink: the gateway is on no connected network, so the kernel refuses it
                            bad = b.replaceRoute(new Route(IpPrefix.parse("10.99.0.0/24"), InetAddress.getByName("10.98.0.1"),
                                    node.vxlan, Route.SCOPE_UNIVERSE, false, Route.TYPE_UNICAST, Route.TABLE_MAIN, Route.PROTO_BOOT));
                            gone = b.deleteNeighbour(Neighbour.permanent(node.vxlan, InetAddress.getByName("10.97.0.1"), mac));
                        }
                    }
                    assertThat(b.size()).isEqualTo(3 * PEERS + 2);

                    BatchResult r = b.execute();

                    assertThat(r.size()).isEqualTo(b.size());
                    assertThat(r.failures()).isEqualTo(1);
                    assertThat(r.ok(bad)).isFalse();
                    assertThat(r.ok(gone)).as("deleting an absent entry is quiet, as in RtNetlink").isTrue();
                    NetlinkException e = r.error(bad).orElseThrow();
                    assertThat(e.operation()).isEqualTo("RTM_NEWROUTE");
                    assertThat(e.object()).contains("10.99.0.0/24").contains("10.98.0.1").contains("dev flannel.1");
                    assertThat(e.errno()).isPositive();
                    assertThat(e.kernelMessage()).isNotEmpty();
                    assertThat(r.errors()).containsExactly(e);

                    assertThat(nl.neighbours(node.vxlan)).filteredOn(n -> n.state() == Neighbour.NUD_PERMANENT).hasSize(PEERS);
                    assertThat(nl.fdb(node.vxlan)).filteredOn(f -> f.mac().value() != 0).hasSize(PEERS);
                    assertThat(nl.routesOf(node.vxlan)).filteredOn(Route::onlink).hasSize(PEERS);
                    assertThat(t.exec("ip", "route", "show", "dev", "flannel.1").lines().filter(l -> l.contains("onlink")))
                            .hasSize(PEERS);

                    // executing again replaces everything in place: same single failure
                    assertThat(b.execute().errors()).extracting(NetlinkException::operation).containsExactly("RTM_NEWROUTE");
                }
            });
        }
    }
}
