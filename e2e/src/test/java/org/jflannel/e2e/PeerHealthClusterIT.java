package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.jflannel.core.MacAddress;
import org.jflannel.testsupport.cluster.ClusterNames;
import org.jflannel.testsupport.cluster.ClusterNode;
import org.jflannel.testsupport.cluster.ClusterOptions;
import org.jflannel.testsupport.cluster.ClusterPerClass;
import org.jflannel.testsupport.cluster.Cmd;
import org.jflannel.testsupport.cluster.NetnsCluster;
import org.jflannel.testsupport.cluster.NodeLease;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 12 on the 3-node etcd cluster: every node probes its peers through the overlay and says why
 * one is unreachable. Each scenario breaks one thing on purpose, waits (bounded, 30 s: three probe
 * intervals) for the verdict on /peers, checks that /metrics says the same, repairs and waits for
 * recovery. Probing runs with the daemon's defaults (a round per peer every 10 s).
 */
@Tag("e2e")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class PeerHealthClusterIT {
    private static final Duration VERDICT_WITHIN = Duration.ofSeconds(30);
    /** A failing peer is probed every second interval (20 s ± 2 s), then one round of up to 2 s. */
    private static final Duration RECOVERY_WITHIN = Duration.ofSeconds(45);
    private static final Duration FIRST_ROUNDS_WITHIN = Duration.ofSeconds(45);
    private static final Duration CMD = Duration.ofSeconds(30);
    @RegisterExtension
    static final ClusterPerClass CLUSTER = ClusterPerClass.of(ClusterOptions.defaults().withPodsPerNode(0));
    private final NetnsCluster cluster;

    PeerHealthClusterIT(NetnsCluster cluster) {
        this.cluster = cluster;
    }

    @Test
    @Order(1)
    void everyNodeReportsEveryPeerReachableAndMetricsAgree() throws Exception {
        for (ClusterNode n : cluster.nodes()) {
            PeerHealth.awaitEveryPeer(n, 2, "reachable", FIRST_ROUNDS_WITHIN);
            JsonNode doc = PeerHealth.JSON.readTree(n.peers());
            assertThat(doc.get("probing").asBoolean()).isTrue();
            assertThat(doc.get("peers")).as("peers of %s", n.name()).hasSize(2);
            for (JsonNode p : doc.get("peers")) {
                assertThat(p.get("cause").isNull()).isTrue();
                assertThat(p.at("/lastProbe/small").asText()).isEqualTo("ok");
                assertThat(p.at("/lastProbe/fullSize").asText()).isEqualTo("ok");
                assertThat(p.at("/lease/vtepMac").asText()).as("lease VTEP MAC").isEqualTo(p.at("/entries/neighbour").asText());
                assertThat(p.at("/entries/fdb")).hasSize(1);
                assertThat(p.at("/entries/route").asText()).endsWith("onlink");
            }
            PeerHealth.assertMetricsAgree(n);
        }
    }

    @Test
    @Order(2)
    void udpPortDroppedFromOnePeerIsOverlayBlockedOnBothSidesAndRecovers() throws Exception {
        ClusterNode a = cluster.node(1);
        ClusterNode b = cluster.node(2);
        List<String> rule = List.of("INPUT", "-p", "udp", "--dport", "8472", "-s", ClusterNames.nodeIp(2), "-j", "DROP");
        inNode(a, concat(List.of("iptables", "-I"), rule));
        try {
            PeerHealth.awaitPeer(a, b, "overlay_blocked", VERDICT_WITHIN);
            PeerHealth.awaitPeer(b, a, "overlay_blocked", VERDICT_WITHIN);
            assertThat(PeerHealth.peer(a, cluster.node(3)).get("state").asText()).as("the third node is untouched")
                    .isEqualTo("reachable");
            assertThat(PeerHealth.peer(a, b).at("/lastProbe/underlay").asText()).isEqualTo("ok");
            PeerHealth.assertMetricsAgree(a);
            PeerHealth.assertMetricsAgree(b);
            assertThat(a.metric("flanneld_peer_probe_failures_total{cause=\"overlay_blocked\"}")).isPositive();
        } finally {
            inNode(a, concat(List.of("iptables", "-D"), rule));
        }
        PeerHealth.awaitPeer(a, b, "reachable", RECOVERY_WITHIN);
        PeerHealth.awaitPeer(b, a, "reachable", RECOVERY_WITHIN);
        PeerHealth.assertMetricsAgree(a);
    }

    @Test
    @Order(3)
    void underlayMtuLoweredOnOneLinkIsAnMtuBlackHoleAndRecovers() throws Exception {
        ClusterNode a = cluster.node(1);
        ClusterNode b = cluster.node(2);
        cluster.setUnderlayLinkMtu(2, 1400); // VXLAN needs 1450 + 50
        try {
            PeerHealth.awaitPeer(a, b, "mtu_black_hole", VERDICT_WITHIN);
            PeerHealth.awaitPeer(b, a, "mtu_black_hole", VERDICT_WITHIN);
            assertThat(PeerHealth.peer(a, b).at("/lastProbe/small").asText()).isEqualTo("ok");
            assertThat(PeerHealth.peer(a, cluster.node(3)).get("state").asText()).isEqualTo("reachable");
            PeerHealth.assertMetricsAgree(a);
            PeerHealth.assertMetricsAgree(b);
        } finally {
            cluster.setUnderlayLinkMtu(2, 1500);
        }
        PeerHealth.awaitPeer(a, b, "reachable", RECOVERY_WITHIN);
        PeerHealth.awaitPeer(b, a, "reachable", RECOVERY_WITHIN);
    }

    /**
     * The periodic reconcile would repair the entry within 10 s; with it held off
     * ({@code --vxlan-reconcile-interval=0}) the wrong MAC stays and the prober names it.
     */
    @Test
    @Order(4)
    void neighbourRewrittenWithAWrongMacIsStaleEntriesWhileTheRepairIsOff() throws Exception {
        ClusterNode a = cluster.node(1);
        ClusterNode b = cluster.node(2);
        a.stop();
        a.start("--vxlan-reconcile-interval=0");
        a.awaitReady();
        cluster.awaitConverged();
        PeerHealth.awaitEveryPeer(a, 2, "reachable", FIRST_ROUNDS_WITHIN);
        NodeLease lb = b.lease();
        MacAddress right = b.entries().link().mac();
        a.replaceNeighbour(lb.subnetAddress(), MacAddress.parse("0e:de:ad:be:ef:01"));
        try {
            JsonNode p = PeerHealth.awaitPeer(a, b, "stale_entries", VERDICT_WITHIN);
            assertThat(p.at("/entries/neighbour").asText()).isEqualTo("0e:de:ad:be:ef:01");
            assertThat(p.at("/lease/vtepMac").asText()).isEqualTo(right.toString());
            assertThat(p.get("detail").asText()).contains("lease says " + right);
            PeerHealth.assertMetricsAgree(a);
            assertThat(a.metric("flanneld_peer_probe_failures_total{cause=\"stale_entries\"}")).isPositive();
        } finally {
            a.replaceNeighbour(lb.subnetAddress(), right);
        }
        PeerHealth.awaitPeer(a, b, "reachable", RECOVERY_WITHIN);
        a.stop();
        a.start();
        a.awaitReady();
        cluster.awaitConverged();
    }

    private static List<String> concat(List<String> a, List<String> b) {
        List<String> out = new ArrayList<>(a);
        out.addAll(b);
        return out;
    }

    private static void inNode(ClusterNode n, List<String> cmd) throws Exception {
        List<String> full = new ArrayList<>(List.of("ip", "netns", "exec", n.namespace()));
        full.addAll(cmd);
        Cmd.run(CMD, full).orThrow();
    }
}
