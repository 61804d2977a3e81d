package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.jflannel.testsupport.cluster.ClusterNode;
import org.jflannel.testsupport.cluster.ClusterOptions;
import org.jflannel.testsupport.cluster.ClusterPerClass;
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
 * The 3-node etcd cluster on the host-gw backend: the nodes share the fabric bridge's L2, every
 * pod-to-pod packet is routed by the kernels via the peers' eth0 addresses. One cluster for the
 * class; the test that takes a node's lease away runs last.
 */
@Tag("e2e")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class EtcdHostGwClusterIT {
    /** What upstream flannel (v0.28.9) writes for a host-gw node: LeaseAttrs, no BackendData (omitempty). */
    static final String UPSTREAM_VALUE = "{\"PublicIP\":\"" + HostGwOverlay.UPSTREAM_IP
            + "\",\"PublicIPv6\":null,\"BackendType\":\"host-gw\"}";

    @RegisterExtension
    static final ClusterPerClass CLUSTER = ClusterPerClass.of(ClusterOptions.defaults().withBackend("host-gw"));
    private final NetnsCluster cluster;

    EtcdHostGwClusterIT(NetnsCluster cluster) {
        this.cluster = cluster;
    }

    @Test
    @Order(1)
    void everyPodReachesEveryOtherPod() throws Exception {
        assertThat(cluster.pods()).hasSize(6);
        Overlay.assertEveryPodReachesEveryOther(cluster);
    }

    @Test
    @Order(2)
    void eachNodeRoutesEachPeerSubnetViaThePeerAddressWithUpstreamsAttributes() throws Exception {
        HostGwOverlay.assertOneRoutePerPeer(cluster);
        NodeLease l = cluster.node(1).lease();
        assertThat(cluster.etcdGet(NetnsCluster.leaseKey(l))).isEqualTo(
                "{\"PublicIP\":\"" + l.publicIp().getHostAddress() + "\",\"PublicIPv6\":null,\"BackendType\":\"host-gw\"}");
    }

    @Test
    @Order(3)
    void leaseWrittenAsUpstreamWritesItIsProgrammedAndRemoved() throws Exception {
        String key = "/coreos.com/network/subnets/" + HostGwOverlay.UPSTREAM_SUBNET.replace('/', '-');
        cluster.etcdPut(key, UPSTREAM_VALUE);
        HostGwOverlay.awaitRouteOnEveryNode(cluster, HostGwOverlay.UPSTREAM_SUBNET,
                java.net.InetAddress.getByName(HostGwOverlay.UPSTREAM_IP));

        assertThat(cluster.etcdDelete(key)).isEqualTo(1);
        HostGwOverlay.awaitRouteOnEveryNode(cluster, HostGwOverlay.UPSTREAM_SUBNET, null);
    }

    @Test
    @Order(4)
    void peerOnAnotherSubnetIsRefusedWhileTheOthersKeepWorking() throws Exception {
        String key = "/coreos.com/network/subnets/" + HostGwOverlay.OFF_SEGMENT_SUBNET.replace('/', '-');
        cluster.etcdPut(key, "{\"PublicIP\":\"" + HostGwOverlay.OFF_SEGMENT_IP + "\",\"PublicIPv6\":null,\"BackendType\":\"host-gw\"}");
        try {
            HostGwOverlay.awaitRefusedEverywhere(cluster);
            HostGwOverlay.assertOneRoutePerPeer(cluster);
            Overlay.assertEveryPodReachesEveryOther(cluster);
        } finally {
            cluster.etcdDelete(key);
        }
    }

    @Test
    @Order(5)
    void routeDeletedByHandIsRestored() throws Exception {
        HostGwOverlay.assertHandDeletedRouteRestored(cluster);
    }

    @Test
    @Order(6)
    void routesStayWhileTheDaemonIsDownAndARestartLeavesThemUntouched() throws Exception {
        ClusterNode n1 = cluster.node(1);
        var before = n1.hostGwRoutes().routes();
        assertThat(n1.stop()).as("exit code on SIGTERM").isZero();
        assertThat(n1.hostGwRoutes().routes()).as("routes with the daemon down").isEqualTo(before);
        Overlay.assertEveryPodReachesEveryOther(cluster); // the kernel routes; the daemon is not in the path

        n1.start();
        n1.awaitReady();
        cluster.awaitConverged();
        assertThat(n1.hostGwRoutes().routes()).isEqualTo(before);
        assertThat(n1.logSinceStart()).doesNotContain("stray route removed").doesNotContain("route repaired");
    }

    @Test
    @Order(7)
    void leaseDeletedInEtcdRemovesItsRoutesOnTheOtherNodes() throws Exception {
        NodeLease lease = cluster.node(3).lease();
        assertThat(cluster.deleteLease(lease)).as("keys deleted").isEqualTo(1);

        for (ClusterNode other : List.of(cluster.node(1), cluster.node(2))) {
            org.jflannel.testsupport.cluster.Wait.until("route to " + lease.subnet() + " gone from " + other.name(),
                    HostGwOverlay.WITHIN, other::hostGwRoutes, e -> e.routesTo(lease.subnet()).isEmpty());
        }
    }
}
