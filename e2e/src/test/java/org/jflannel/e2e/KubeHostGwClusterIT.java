package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.net.InetAddress;
import java.util.List;
import org.jflannel.testsupport.cluster.ClusterNode;
import org.jflannel.testsupport.cluster.ClusterOptions;
import org.jflannel.testsupport.cluster.ClusterPerClass;
import org.jflannel.testsupport.cluster.ClusterOptions.Mode;
import org.jflannel.testsupport.cluster.NetnsCluster;
import org.jflannel.testsupport.cluster.NodeLease;
import org.jflannel.testsupport.cluster.Wait;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

/** The 3-node Kubernetes-mode cluster on the host-gw backend. One cluster for the class; the node deletion runs last. */
@Tag("e2e")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class KubeHostGwClusterIT {
    private static final String PREFIX = "flannel.alpha.coreos.com/";

    @RegisterExtension
    static final ClusterPerClass CLUSTER = ClusterPerClass.of(ClusterOptions.defaults().withMode(Mode.KUBE)
            .withBackend("host-gw"));
    private final NetnsCluster cluster;

    KubeHostGwClusterIT(NetnsCluster cluster) {
        this.cluster = cluster;
    }

    /**
     * A Node as upstream flannel (v0.28.9, host-gw, IPv4) leaves it: backend-type host-gw and
     * backend-data "null" (its nil BackendData marshalled), public-ip, kube-subnet-manager "true".
     */
    static String upstreamNode(String name, String podCidr, String publicIp) {
        return """
                {"apiVersion":"v1","kind":"Node","metadata":{"name":"%s","annotations":{
                  "flannel.alpha.coreos.com/backend-data":"null",
                  "flannel.alpha.coreos.com/backend-type":"host-gw",
                  "flannel.alpha.coreos.com/kube-subnet-manager":"true",
                  "flannel.alpha.coreos.com/public-ip":"%s"}},
                 "spec":{"podCIDR":"%s","podCIDRs":["%s"]}}
                """.formatted(name, publicIp, podCidr, podCidr);
    }

    @Test
    @Order(1)
    void everyPodReachesEveryOtherPod() throws Exception {
        assertThat(cluster.pods()).hasSize(6);
        Overlay.assertEveryPodReachesEveryOther(cluster);
    }

    @Test
    @Order(2)
    void routesAndAnnotationsAreUpstreams() throws Exception {
        HostGwOverlay.assertOneRoutePerPeer(cluster);
        for (ClusterNode n : cluster.nodes()) {
            JsonNode a = cluster.kubeNode(n.name()).path("metadata").path("annotations");
            assertThat(a.path(PREFIX + "backend-type").asText()).isEqualTo("host-gw");
            assertThat(a.path(PREFIX + "backend-data").asText()).isEqualTo("null");
            assertThat(a.path(PREFIX + "public-ip").asText()).isEqualTo(n.publicIp().getHostAddress());
            assertThat(a.path(PREFIX + "kube-subnet-manager").asText()).isEqualTo("true");
        }
    }

    @Test
    @Order(3)
    void nodeAnnotatedAsUpstreamAnnotatesItIsProgrammedAndRemoved() throws Exception {
        cluster.createKubeNode(upstreamNode("upstream1", HostGwOverlay.UPSTREAM_SUBNET, HostGwOverlay.UPSTREAM_IP));
        HostGwOverlay.awaitRouteOnEveryNode(cluster, HostGwOverlay.UPSTREAM_SUBNET,
                InetAddress.getByName(HostGwOverlay.UPSTREAM_IP));

        cluster.deleteKubeNode("upstream1");
        HostGwOverlay.awaitRouteOnEveryNode(cluster, HostGwOverlay.UPSTREAM_SUBNET, null);
    }

    @Test
    @Order(4)
    void peerOnAnotherSubnetIsRefusedWhileTheOthersKeepWorking() throws Exception {
        cluster.createKubeNode(upstreamNode("faraway", HostGwOverlay.OFF_SEGMENT_SUBNET, HostGwOverlay.OFF_SEGMENT_IP));
        try {
            HostGwOverlay.awaitRefusedEverywhere(cluster);
            HostGwOverlay.assertOneRoutePerPeer(cluster);
            Overlay.assertEveryPodReachesEveryOther(cluster);
        } finally {
            cluster.deleteKubeNode("faraway");
        }
    }

    @Test
    @Order(5)
    void routeDeletedByHandIsRestored() throws Exception {
        HostGwOverlay.assertHandDeletedRouteRestored(cluster);
    }

    @Test
    @Order(6)
    void nodeDeletedRemovesItsRoutesOnTheOtherNodes() throws Exception {
        NodeLease lease = cluster.node(3).lease();
        cluster.deleteKubeNode(cluster.node(3).name());

        for (ClusterNode other : List.of(cluster.node(1), cluster.node(2))) {
            Wait.until("route to " + lease.subnet() + " gone from " + other.name(), HostGwOverlay.WITHIN,
                    other::hostGwRoutes, e -> e.routesTo(lease.subnet()).isEmpty());
        }
    }
}
