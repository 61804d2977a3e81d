package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.jflannel.testsupport.cluster.ClusterNode;
import org.jflannel.testsupport.cluster.ClusterOptions;
import org.jflannel.testsupport.cluster.ClusterPerClass;
import org.jflannel.testsupport.cluster.NetnsCluster;
import org.jflannel.testsupport.cluster.NodeKind;
import org.jflannel.testsupport.cluster.NodeLease;
import org.jflannel.testsupport.cluster.Pod;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * A udp pair in etcd mode where one node runs the real upstream flanneld v0.20.2: pings and a
 * CRC-checked 32 MB TCP stream each way between the two nodes' pods, and where upstream is involved,
 * our daemon's datagram counters against upstream's flannel0 ({@link UdpDatagramLedger}). Then each
 * node switches daemon in turn, keeping its lease, so the other node's running daemon sees the
 * lease's backend data change under it: node1 upstream to ours, node2 ours to upstream, node2 back,
 * node1 ours to upstream (each direction once from each node: the two nodes differ in address order
 * and in which one took its lease first). Each subclass gives our daemons an environment (as shipped,
 * or a udp path switched); they also inherit the test's own, so {@code JFLANNEL_UDP_KERNEL=0 mvn ...}
 * runs the as-shipped class on the packet threads. One cluster per class; each test begins with its
 * own switch, so a failing one leaves the next its start.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
abstract class UpstreamUdpPairTests {
    private final NetnsCluster cluster;

    UpstreamUdpPairTests(NetnsCluster cluster) {
        this.cluster = cluster;
    }

    /** A subclass's cluster: {@code daemonEnv}, what our daemons' environment adds ({@code JFLANNEL_UDP_*}). */
    static ClusterPerClass pairWith(Map<String, String> daemonEnv) {
        return ClusterPerClass.of(ClusterOptions.defaults().withNodes(2).withPodsPerNode(1).withBackend("udp")
                .withUpstreamNodes(1).withDaemonEnv(daemonEnv));
    }

    @Test
    @Order(1)
    void upstreamNode1AndOurNode2PingAndStreamBothWaysLosingNothing() throws Exception {
        assertThat(cluster.node(1).kind()).isEqualTo(NodeKind.UPSTREAM);
        assertThat(cluster.node(1).logSinceStart()).as("upstream's udp backend took our lease")
                .contains("Subnet added: " + cluster.node(2).lease().subnet());
        assertTrafficBothWays();
    }

    @Test
    @Order(2)
    void node1SwitchedFromUpstreamToOursKeepsItsLeaseAndTheTraffic() throws Exception {
        switchKeepingLease(1, NodeKind.JFLANNEL);
        assertTrafficBothWays();
    }

    @Test
    @Order(3)
    void node2SwitchedFromOursToUpstreamKeepsItsLeaseAndTheTraffic() throws Exception {
        switchKeepingLease(2, NodeKind.UPSTREAM);
        assertTrafficBothWays();
    }

    @Test
    @Order(4)
    void node2SwitchedFromUpstreamToOursKeepsItsLeaseAndTheTraffic() throws Exception {
        switchKeepingLease(2, NodeKind.JFLANNEL);
        assertTrafficBothWays();
    }

    @Test
    @Order(5)
    void node1SwitchedFromOursToUpstreamKeepsItsLeaseAndTheTraffic() throws Exception {
        switchKeepingLease(1, NodeKind.UPSTREAM);
        assertTrafficBothWays();
    }

    @Test
    @Order(6)
    void node1SwitchedFromUpstreamToOursUnderAStreamFromNode2() throws Exception {
        switchUnderAStream(NodeKind.JFLANNEL);
    }

    @Test
    @Order(7)
    void node1SwitchedFromOursToUpstreamUnderAStreamFromNode2() throws Exception {
        switchUnderAStream(NodeKind.UPSTREAM);
    }

    /**
     * A peer whose lease changes under running traffic: node2 (ours) streams to node1's pod while node1
     * switches daemon with its lease kept. The stream survives the gap (TCP retransmits) and arrives whole:
     * what node2 sent while it still took node1 for the old kind, and after, was not lost for good.
     */
    private void switchUnderAStream(NodeKind to) throws Exception {
        ClusterNode ours = cluster.node(2);
        assertThat(ours.kind()).isEqualTo(NodeKind.JFLANNEL);
        Pod p1 = MixedTraffic.podOn(cluster, 1);
        Pod p2 = MixedTraffic.podOn(cluster, 2);
        long before = sentToPeers(ours);
        // long enough to outlast node1's restart: upstream moves a few hundred Mbit/s here, two of ours some Gbit/s
        long bytes = cluster.node(1).kind() == NodeKind.UPSTREAM ? 256L << 20 : 512L << 20;
        java.time.Duration within = java.time.Duration.ofMinutes(3); // most of it may cross upstream's path
        java.util.concurrent.CompletableFuture<org.jflannel.testsupport.cluster.TcpTransfer> stream =
                java.util.concurrent.CompletableFuture.supplyAsync(() -> {
                    try {
                        return org.jflannel.testsupport.cluster.TcpTransfer.run(p2, p1, bytes, within);
                    } catch (Exception e) {
                        throw new java.util.concurrent.CompletionException(e);
                    }
                });
        org.jflannel.testsupport.cluster.Wait.until("the stream under way", java.time.Duration.ofSeconds(30),
                () -> stream.isDone() || sentToPeers(ours) - before > 200);
        switchKeepingLease(1, to);
        var t = stream.get(within.toSeconds() + 60, java.util.concurrent.TimeUnit.SECONDS);
        System.out.println("transfer under the switch to " + to + ": " + t);
        assertThat(t.intact()).as("%s", t).isTrue();
        assertTrafficBothWays();
    }

    /** Datagrams our node counts as sent to peers, both paths. */
    private static long sentToPeers(ClusterNode n) throws Exception {
        return Math.max(0, (long) n.metric("flanneld_udp_packets_total{direction=\"to_peers\"}"))
                + Math.max(0, (long) n.metric("flanneld_udp_kernel_packets_total{direction=\"to_peers\"}"));
    }

    private void switchKeepingLease(int i, NodeKind to) throws Exception {
        ClusterNode n = cluster.node(i);
        assertThat(n.kind()).as("%s before the switch", n.name()).isNotEqualTo(to);
        NodeLease before = n.lease();
        String valueBefore = cluster.etcdGet(NetnsCluster.leaseKey(before));
        NodeLease after = cluster.restartAs(i, to);
        assertThat(after.subnet()).as("%s's subnet after switching to %s", n.name(), to).isEqualTo(before.subnet());
        System.out.println("lease " + before.subnet() + " of " + n.name() + ": " + valueBefore + " -> "
                + cluster.etcdGet(NetnsCluster.leaseKey(after)));
    }

    /** Pings and a 32 MB stream each way between the pods; with an upstream node, the ledger balances. */
    private void assertTrafficBothWays() throws Exception {
        Pod p1 = MixedTraffic.podOn(cluster, 1);
        Pod p2 = MixedTraffic.podOn(cluster, 2);
        ClusterNode upstream = cluster.nodes().stream().filter(n -> n.kind() == NodeKind.UPSTREAM).findFirst().orElse(null);
        ClusterNode ours = cluster.nodes().stream().filter(n -> n.kind() == NodeKind.JFLANNEL).findFirst().orElseThrow();
        for (ClusterNode n : cluster.nodes()) { // which path ours runs (JFLANNEL_UDP_* from the environment), for the log
            if (n.kind() == NodeKind.JFLANNEL) {
                n.logSinceStart().lines().filter(l -> l.contains("UDP config:") || l.contains("kernel datapath"))
                        .forEach(l -> System.out.println(n.name() + ": " + l));
            }
        }
        UdpDatagramLedger ledger = upstream == null ? null : UdpDatagramLedger.open(ours, upstream);

        assertThat(cluster.pingRun(p1, p2, 3, 200).received()).as("pings %s -> %s", p1.name(), p2.name()).isEqualTo(3);
        assertThat(cluster.pingRun(p2, p1, 3, 200).received()).as("pings %s -> %s", p2.name(), p1.name()).isEqualTo(3);
        var there = org.jflannel.testsupport.cluster.TcpTransfer.run(p1, p2, MixedTraffic.BYTES, MixedTraffic.WITHIN);
        var back = org.jflannel.testsupport.cluster.TcpTransfer.run(p2, p1, MixedTraffic.BYTES, MixedTraffic.WITHIN);
        System.out.println("transfer: " + there + "\ntransfer: " + back);
        if (ledger != null) {
            System.out.println("ledger " + ours.name() + "/" + upstream.name() + ": " + ledger.awaitBalanced("the transfers"));
        }
        assertThat(there.intact()).as("%s", there).isTrue();
        assertThat(back.intact()).as("%s", back).isTrue();
        for (ClusterNode n : cluster.nodes()) {
            if (n.kind() == NodeKind.JFLANNEL) {
                checkOurPath(n, upstream == null);
            }
        }
    }

    /**
     * After the traffic: what a subclass knows about the path our node {@code n} must have taken;
     * {@code peerIsOurs}: both nodes run our daemon now.
     */
    void checkOurPath(ClusterNode n, boolean peerIsOurs) throws Exception {
    }
}
