package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.Inet6Address;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.jflannel.linuxnet.netlink.IpPrefix;
import org.jflannel.linuxnet.netlink.Link;
import org.jflannel.linuxnet.netlink.Neighbour;
import org.jflannel.linuxnet.netlink.Route;
import org.jflannel.testsupport.cluster.ClusterNode;
import org.jflannel.testsupport.cluster.Cmd;
import org.jflannel.testsupport.cluster.FlannelEntries;
import org.jflannel.testsupport.cluster.NetnsCluster;
import org.jflannel.testsupport.cluster.NodeLease;
import org.jflannel.testsupport.cluster.PingMatrix;
import org.jflannel.testsupport.cluster.Pod;
import org.jflannel.testsupport.cluster.TcpTransfer;
import org.jflannel.testsupport.vm.KernelVm;

/** Assertions on a dual-stack cluster ({@code ClusterOptions.withDualStack}): both families, end to end. */
final class DualStack {
    /**
     * 8 MB each way over IPv6: thousands of full-size segments through the overlay, a few seconds on the host;
     * 4 MB in the kernel VM, whose emulated CPU moves ours in userspace WireGuard at a few Mbit/s ({@link MixedTraffic}).
     */
    static final long BYTES = KernelVm.inVm() ? 4L << 20 : 8L << 20;
    /** Many times what either takes; a stall is caught sooner, by the receiver's idle limit. */
    static final Duration WITHIN = KernelVm.inVm() ? Duration.ofMinutes(4) : Duration.ofSeconds(90);

    private DualStack() {
    }

    /** The ping matrix of {@code family} is full: every pod answers every other pod. */
    static void assertEveryPodReachesEveryOther(NetnsCluster cluster, Pod.Family family) throws Exception {
        PingMatrix m = cluster.pingMatrix(family);
        System.out.println("ping matrix " + family + ":\n" + m.render());
        assertThat(m.results()).as("pairs").hasSize(cluster.pods().size() * (cluster.pods().size() - 1));
        assertThat(m.failures()).as("%s pairs without an answer\n%s", family, m.render()).isEmpty();
    }

    /**
     * subnet.env carries both families as upstream writes them (REFERENCE §3): the IPv6 network as
     * configured, the node's IPv6 subnet (a /64 inside it) with IP + 1; every pod got one address of
     * each family from its node's subnets (our plugin hands host-local both ranges).
     */
    static void assertSubnetEnvAndPodAddresses(NetnsCluster cluster) throws Exception {
        String v6Network = cluster.options().ipv6Network();
        IpPrefix network = IpPrefix.parse(v6Network);
        for (ClusterNode n : cluster.nodes()) {
            Map<String, String> env = n.readSubnetEnv();
            assertThat(env).as("%s subnet.env", n.name()).containsEntry("FLANNEL_IPV6_NETWORK", v6Network)
                    .containsKeys("FLANNEL_NETWORK", "FLANNEL_SUBNET", "FLANNEL_MTU", "FLANNEL_IPMASQ");
            IpPrefix subnet = IpPrefix.parse(env.get("FLANNEL_IPV6_SUBNET"));
            assertThat(subnet.prefixLength()).as("%s IPv6 subnet length", n.name()).isEqualTo(64);
            assertThat(within(subnet.address(), network)).as("%s IPv6 subnet %s inside %s", n.name(), subnet, network).isTrue();
            assertThat(subnet.address().getAddress()[15]).as("%s FLANNEL_IPV6_SUBNET is the subnet's IP + 1", n.name())
                    .isEqualTo((byte) 1);
        }
        for (Pod p : cluster.pods()) {
            assertThat(p.ipv6()).as("%s IPv6 address", p.name()).isNotNull();
            NodeLease l6 = cluster.node(p.node()).ipv6Lease();
            assertThat(within(IpPrefix.parse(p.ipv6()).address(), IpPrefix.parse(l6.subnet())))
                    .as("pod %s %s inside its node's %s", p.name(), p.ipv6(), l6.subnet()).isTrue();
        }
    }

    /** A checked TCP stream over IPv6 from {@code from} to {@code to} arrives whole (length and CRC-32 on both ends). */
    static TcpTransfer assertIntactOverIpv6(Pod from, Pod to) throws Exception {
        TcpTransfer t = TcpTransfer.run(from, to, BYTES, WITHIN, Pod.Family.IPV6);
        System.out.println("transfer: " + t);
        assertThat(t.intact()).as("%s", t).isTrue();
        return t;
    }

    /**
     * vxlan's IPv6 device (REFERENCE §6.1): {@code flannel-v6.1}, vxlan, VNI 1, local = the node's IPv6
     * underlay address, port 8472, no learning, up, holding {@code <IPv6 subnet IP>/128}. MTU: upstream
     * asks for 1500 − 50 as for IPv4; the kernel caps a VTEP over an IPv6 underlay at 1500 − 70 and
     * clamps to it, upstream's device and ours alike (FLANNEL_MTU stays 1450: IPv6 pods learn 1430 from
     * the node's Packet Too Big).
     */
    static void assertV6VtepAttributes(ClusterNode node) throws Exception {
        Link l = node.entriesV6().link();
        assertThat(l).as("flannel-v6.1 on %s", node.name()).isNotNull();
        assertThat(l.kind()).isEqualTo("vxlan");
        assertThat(l.mtu()).as("flannel-v6.1 MTU on %s", node.name()).isEqualTo(1430);
        assertThat(node.lease().mtu()).as("FLANNEL_MTU on %s", node.name()).isEqualTo(1450);
        assertThat(l.up()).isTrue();
        assertThat(l.vxlan().vni()).isEqualTo(1);
        assertThat(l.vxlan().local()).isEqualTo(node.publicIpv6());
        assertThat(l.vxlan().port()).isEqualTo(8472);
        assertThat(l.vxlan().learning()).isFalse();
        NodeLease l6 = node.ipv6Lease();
        String addr = Cmd.run(Duration.ofSeconds(10), List.of("ip", "-n", node.namespace(), "-6", "-o", "addr", "show",
                "dev", ClusterNode.VXLAN_V6_DEVICE, "scope", "global")).orThrow().stdout();
        assertThat(addr).as("global IPv6 addresses of flannel-v6.1 on %s", node.name())
                .contains(" " + l6.subnet().replace("/64", "/128") + " ").hasLineCount(1);
    }

    /**
     * Each node holds, on {@code flannel-v6.1}, exactly one permanent IPv6 neighbour, one FDB entry and
     * one IPv6 route per peer with upstream's attributes: neighbour peer-v6-subnet-IP → peer's v6 VTEP
     * MAC; FDB that MAC → the peer's IPv6 underlay address; route peer v6 subnet via peer-v6-subnet-IP
     * onlink, main table.
     */
    static void assertExactlyOneV6EntryPerPeer(NetnsCluster cluster) throws Exception {
        List<NodeLease> leases = cluster.ipv6Leases();
        for (ClusterNode node : cluster.nodes()) {
            FlannelEntries e = node.entriesV6();
            assertThat(e.linkPresent()).as("flannel-v6.1 on %s", node.name()).isTrue();
            List<NodeLease> peers = leases.stream().filter(l -> !l.node().equals(node.name())).toList();
            List<Neighbour> permanent = e.neighbours().stream()
                    .filter(n -> n.ip() instanceof Inet6Address && !n.ip().isLinkLocalAddress()
                            && (n.state() & Neighbour.NUD_PERMANENT) != 0).toList();
            assertThat(permanent).as("permanent IPv6 neighbours on %s: %s", node.name(), e.neighbours()).hasSize(peers.size());
            assertThat(e.fdb()).as("FDB entries on %s", node.name()).hasSize(peers.size());
            List<Route> toPeers = e.routes().stream().filter(r -> !r.isIpv4() && r.dst() != null
                    && peers.stream().anyMatch(p -> p.subnet().equals(r.dst().toString()))).toList();
            assertThat(toPeers).as("IPv6 routes to peers on %s: %s", node.name(), e.routes()).hasSize(peers.size());
            for (NodeLease peer : peers) {
                Link peerVtep = cluster.nodes().stream().filter(n -> n.name().equals(peer.node())).findFirst()
                        .orElseThrow().entriesV6().link();
                Overlay.assertPeerEntries(node, e, peer, peerVtep);
            }
        }
    }

    /** The full pod ping matrix over IPv4, then over IPv6. */
    static void assertEveryPodReachesEveryOtherInBothFamilies(NetnsCluster cluster) throws Exception {
        assertEveryPodReachesEveryOther(cluster, Pod.Family.IPV4);
        assertEveryPodReachesEveryOther(cluster, Pod.Family.IPV6);
    }

    /** A CRC-checked TCP transfer over IPv6 from {@code a} to {@code b}, then back. */
    static void assertIntactOverIpv6BothWays(Pod a, Pod b) throws Exception {
        assertIntactOverIpv6(a, b);
        assertIntactOverIpv6(b, a);
    }

    /** vxlan: both VTEPs of every node as upstream makes them, and exactly one entry per peer in each family. */
    static void assertBothVtepsWithOneEntryPerPeer(NetnsCluster cluster) throws Exception {
        for (ClusterNode n : cluster.nodes()) {
            Overlay.assertVtepAttributes(n);
            assertV6VtepAttributes(n);
        }
        Overlay.assertExactlyOneEntryPerPeer(cluster);
        assertExactlyOneV6EntryPerPeer(cluster);
    }

    /** Whether {@code ip} lies inside {@code prefix}. */
    static boolean within(java.net.InetAddress ip, IpPrefix prefix) {
        return new IpPrefix(ip, prefix.prefixLength()).network().equals(prefix.network());
    }
}
