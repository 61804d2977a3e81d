package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.Inet4Address;
import java.util.List;
import org.jflannel.linuxnet.netlink.FdbEntry;
import org.jflannel.linuxnet.netlink.Link;
import org.jflannel.linuxnet.netlink.Neighbour;
import org.jflannel.linuxnet.netlink.Route;
import org.jflannel.testsupport.cluster.ClusterNode;
import org.jflannel.testsupport.cluster.FlannelEntries;
import org.jflannel.testsupport.cluster.NetnsCluster;
import org.jflannel.testsupport.cluster.NodeLease;
import org.jflannel.testsupport.cluster.PingMatrix;

/** Assertions on a whole cluster's overlay, shared by the etcd- and Kubernetes-mode suites. */
final class Overlay {
    private Overlay() {
    }

    static void assertEveryPodReachesEveryOther(NetnsCluster cluster) throws Exception {
        PingMatrix m = cluster.pingMatrix();
        assertThat(m.results()).as("pairs").hasSize(cluster.pods().size() * (cluster.pods().size() - 1));
        assertThat(m.failures()).as("pairs without an answer\n%s", m.render()).isEmpty();
    }

    /**
     * Each node holds, on flannel.1, exactly one neighbour, one FDB entry and one route per peer and
     * nothing else, with upstream's attributes (REFERENCE §6.7): neighbour peer-subnet-IP → peer
     * VTEP MAC, permanent; FDB peer VTEP MAC → peer public IP; route peer subnet via peer-subnet-IP
     * onlink, scope universe, main table, unicast.
     */
    static void assertExactlyOneEntryPerPeer(NetnsCluster cluster) throws Exception {
        List<NodeLease> leases = cluster.leases();
        for (ClusterNode node : cluster.nodes()) {
            FlannelEntries e = node.entries();
            assertThat(e.linkPresent()).as("flannel.1 on %s", node.name()).isTrue();
            List<NodeLease> peers = leases.stream().filter(l -> !l.node().equals(node.name())).toList();
            assertThat(ipv4Neighbours(e)).as("IPv4 neighbours on %s", node.name()).hasSize(peers.size());
            assertThat(e.fdb()).as("FDB entries on %s", node.name()).hasSize(peers.size());
            assertThat(ipv4Routes(e)).as("IPv4 routes on %s", node.name()).hasSize(peers.size());
            for (NodeLease peer : peers) {
                Link peerVtep = cluster.nodes().stream().filter(n -> n.name().equals(peer.node())).findFirst()
                        .orElseThrow().entries().link();
                assertPeerEntries(node, e, peer, peerVtep);
            }
        }
    }

    /** One peer's neighbour, FDB entry and onlink route on {@code e}'s VTEP (either family: the device of {@code e}). */
    static void assertPeerEntries(ClusterNode node, FlannelEntries e, NodeLease peer, Link peerVtep) {
        String on = node.name() + " for peer " + peer.node() + " " + peer.subnet();
        int dev = e.link().index();
        assertThat(e.neighbour(peer.subnetAddress())).as("neighbour on %s", on)
                .contains(Neighbour.permanent(dev, peer.subnetAddress(), peerVtep.mac()));
        assertThat(e.fdbTo(peer.publicIp())).as("FDB on %s", on)
                .containsExactly(new FdbEntry(dev, peerVtep.mac(), peer.publicIp()));
        assertThat(e.routesTo(peer.subnet())).as("route on %s", on).singleElement().satisfies(r -> {
            assertThat(r.gateway()).isEqualTo(peer.subnetAddress());
            assertThat(r.linkIndex()).isEqualTo(dev);
            assertThat(r.onlink()).as("onlink").isTrue();
            assertThat(r.scope()).isEqualTo(Route.SCOPE_UNIVERSE);
            assertThat(r.type()).isEqualTo(Route.TYPE_UNICAST);
            assertThat(r.table()).isEqualTo(Route.TABLE_MAIN);
        });
    }

    /** The device itself: VNI 1, local = the node's public IP, port 8472, no learning, MTU 1450 (REFERENCE §6.1). */
    static void assertVtepAttributes(ClusterNode node) throws Exception {
        Link l = node.entries().link();
        assertThat(l).as("flannel.1 on %s", node.name()).isNotNull();
        assertThat(l.kind()).isEqualTo("vxlan");
        assertThat(l.mtu()).isEqualTo(1450);
        assertThat(l.up()).isTrue();
        assertThat(l.vxlan().vni()).isEqualTo(1);
        assertThat(l.vxlan().local()).isEqualTo(node.publicIp());
        assertThat(l.vxlan().port()).isEqualTo(8472);
        assertThat(l.vxlan().learning()).isFalse();
    }

    /**
     * The UDP backend's device (REFERENCE §7): flannel0 is a TUN, up, MTU = underlay 1500 − 28, which
     * is also the node's FLANNEL_MTU, with one route: the cluster network. No VXLAN device.
     */
    static void assertUdpDevice(ClusterNode node, String network) throws Exception {
        FlannelEntries tun = node.udpDevice();
        assertThat(tun.linkPresent()).as("flannel0 on %s", node.name()).isTrue();
        assertThat(tun.link().kind()).isEqualTo("tun");
        assertThat(tun.link().up()).isTrue();
        assertThat(tun.link().mtu()).isEqualTo(1472);
        assertThat(node.lease().mtu()).as("FLANNEL_MTU on %s", node.name()).isEqualTo(1472);
        assertThat(ipv4Routes(tun)).as("routes on flannel0 of %s", node.name()).singleElement().satisfies(r -> {
            assertThat(r.dst()).hasToString(network);
            assertThat(r.gateway()).isNull();
            assertThat(r.scope()).isEqualTo(Route.SCOPE_UNIVERSE);
        });
        assertThat(node.entries().linkPresent()).as("flannel.1 on %s", node.name()).isFalse();
    }

    static List<Neighbour> ipv4Neighbours(FlannelEntries e) {
        return e.neighbours().stream().filter(n -> n.ip() instanceof Inet4Address).toList();
    }

    static List<Route> ipv4Routes(FlannelEntries e) {
        return e.routes().stream().filter(Route::isIpv4).toList();
    }
}
