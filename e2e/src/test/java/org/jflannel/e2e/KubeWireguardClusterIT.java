package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.nio.file.Files;
import java.time.Duration;
import org.jflannel.testsupport.cluster.ClusterNode;
import org.jflannel.testsupport.cluster.ClusterOptions;
import org.jflannel.testsupport.cluster.ClusterPerClass;
import org.jflannel.testsupport.cluster.ClusterOptions.Mode;
import org.jflannel.testsupport.cluster.NetnsCluster;
import org.jflannel.testsupport.cluster.Wait;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The 3-node Kubernetes-mode cluster (mock API server) on the wireguard backend: the public key
 * travels in the Node annotations as upstream's backend-data, every pod reaches every other, and a
 * node whose key file is removed comes back under a new key that its peers pick up.
 */
@Tag("e2e")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class KubeWireguardClusterIT {
    private static final String PREFIX = "flannel.alpha.coreos.com/";
    @RegisterExtension
    static final ClusterPerClass CLUSTER = ClusterPerClass.of(ClusterOptions.defaults().withMode(Mode.KUBE)
            .withBackend("wireguard"));
    private final NetnsCluster cluster;

    KubeWireguardClusterIT(NetnsCluster cluster) {
        this.cluster = cluster;
    }

    @Test
    @Order(1)
    void everyPodReachesEveryOtherAndTheAnnotationsCarryThePublicKey() throws Exception {
        Overlay.assertEveryPodReachesEveryOther(cluster);
        for (ClusterNode n : cluster.nodes()) {
            JsonNode a = cluster.kubeNode(n.name()).path("metadata").path("annotations");
            assertThat(a.path(PREFIX + "backend-type").asText()).isEqualTo("wireguard");
            assertThat(a.path(PREFIX + "backend-data").asText()).startsWith("{\"PublicKey\":\"").endsWith("\",\"Port\":51820}");
            assertThat(Files.exists(n.dir().resolve("wgkey"))).isTrue();
        }
    }

    @Test
    @Order(2)
    void aRotatedKeyIsPickedUpByThePeers() throws Exception {
        ClusterNode n2 = cluster.node(2);
        String before = backendData(n2);
        n2.stop();
        Files.delete(n2.dir().resolve("wgkey"));
        n2.start();
        n2.awaitReady();
        Wait.until("node2's annotation under a new key", Duration.ofSeconds(30), () -> !backendData(n2).equals(before));
        Wait.until("every pod reaches every other under node2's new key", Duration.ofSeconds(60), () ->
                cluster.pingMatrix().failures().isEmpty());
    }

    private String backendData(ClusterNode n) throws Exception {
        return cluster.kubeNode(n.name()).path("metadata").path("annotations").path(PREFIX + "backend-data").asText();
    }
}
