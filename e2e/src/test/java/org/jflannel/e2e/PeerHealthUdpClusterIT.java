package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import org.jflannel.testsupport.cluster.ClusterNode;
import org.jflannel.testsupport.cluster.ClusterOptions;
import org.jflannel.testsupport.cluster.ClusterPerClass;
import org.jflannel.testsupport.cluster.NetnsCluster;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.RegisterExtension;

/** Issue 12 on the udp backend: the probes cross flannel0 to each peer's flannel0 address, full size included. */
@Tag("e2e")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PeerHealthUdpClusterIT {
    @RegisterExtension
    static final ClusterPerClass CLUSTER = ClusterPerClass.of(ClusterOptions.defaults().withBackend("udp")
            .withPodsPerNode(0));
    private final NetnsCluster cluster;

    PeerHealthUdpClusterIT(NetnsCluster cluster) {
        this.cluster = cluster;
    }

    @Test
    void everyNodeReportsEveryPeerReachableThroughFlannel0() throws Exception {
        for (ClusterNode n : cluster.nodes()) {
            PeerHealth.awaitEveryPeer(n, 2, "reachable", Duration.ofSeconds(45));
            JsonNode doc = PeerHealth.JSON.readTree(n.peers());
            assertThat(doc.get("backend").asText()).isEqualTo("udp");
            assertThat(doc.get("fullSizeBytes").asInt()).as("FLANNEL_MTU of udp").isEqualTo(1472);
            for (JsonNode p : doc.get("peers")) {
                assertThat(p.at("/lastProbe/fullSize").asText()).isEqualTo("ok");
                assertThat(p.has("entries")).as("no per-peer kernel entries on udp").isFalse();
            }
            PeerHealth.assertMetricsAgree(n);
        }
    }
}
