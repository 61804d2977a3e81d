package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.time.Duration;
import org.jflannel.testbase.NetnsPrivilege;
import org.jflannel.testsupport.cluster.ClusterNode;
import org.jflannel.testsupport.cluster.ClusterOptions;
import org.jflannel.testsupport.cluster.NetnsCluster;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/** Issue 12 on the udp backend: the probes cross flannel0 to each peer's flannel0 address, full size included. */
@Tag("e2e")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PeerHealthUdpClusterIT {
    private NetnsCluster cluster;

    @BeforeAll
    void startCluster() throws Exception {
        NetnsPrivilege.require();
        cluster = NetnsCluster.start(ClusterOptions.defaults().withBackend("udp").withPodsPerNode(0)
                .withProgress(l -> System.out.println("cluster: " + l)));
    }

    @AfterAll
    void removeCluster() throws Exception {
        if (cluster != null) {
            cluster.close();
        }
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
