package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import org.jflannel.testsupport.cluster.ClusterNode;
import org.jflannel.testsupport.cluster.ClusterOptions;
import org.jflannel.testsupport.cluster.ClusterPerClass;
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

/**
 * The 3-node etcd cluster on the UDP backend: real flanneld processes move every pod-to-pod packet
 * through flannel0 and their UDP sockets. One cluster for the class; the test that takes a lease
 * away runs last.
 */
@Tag("e2e")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class EtcdUdpClusterIT {
    @RegisterExtension
    static final ClusterPerClass CLUSTER = ClusterPerClass.of(ClusterOptions.defaults().withBackend("udp"));
    private final NetnsCluster cluster;

    EtcdUdpClusterIT(NetnsCluster cluster) {
        this.cluster = cluster;
    }

    @Test
    @Order(1)
    void everyPodReachesEveryOtherPod() throws Exception {
        assertThat(cluster.pods()).hasSize(6);
        Overlay.assertEveryPodReachesEveryOther(cluster);
        for (ClusterNode n : cluster.nodes()) { // as shipped: the kernel encapsulated, and decapsulated through VXLAN-GPE
            assertThat(n.metric("flanneld_udp_kernel_packets_total{direction=\"to_peers\"}")).as("encapsulated by %s's kernel", n.name())
                    .isPositive();
            assertThat(n.metric("flanneld_udp_kernel_packets_total{direction=\"from_peers\"}"))
                    .as("decapsulated by %s's kernel", n.name()).isPositive();
            assertThat(n.logSinceStart()).as("%s log", n.name()).contains("udp kernel decapsulation through a vxlan-gpe device")
                    .doesNotContain("udp vxlan-gpe path left");
            assertThat(cluster.etcdGet(NetnsCluster.leaseKey(n.lease()))).as("%s takes kernel-encapsulated datagrams", n.name())
                    .contains("KernelDecap");
        }
    }

    @Test
    @Order(2)
    void eachNodeHasFlannel0WithTheUdpMtuAndTheNetworkRoute() throws Exception {
        for (ClusterNode n : cluster.nodes()) {
            Overlay.assertUdpDevice(n, cluster.options().network());
        }
    }

    @Test
    @Order(3)
    void leaseDeletedInEtcdLeavesThePeerTablesOfTheOtherNodes() throws Exception {
        NodeLease lease = cluster.node(3).lease();
        assertThat(cluster.deleteLease(lease)).as("keys deleted").isEqualTo(1);

        for (ClusterNode other : List.of(cluster.node(1), cluster.node(2))) {
            Wait.until("lease " + lease.subnet() + " gone from " + other.name() + "'s peers", Duration.ofSeconds(10),
                    () -> other.leasesApplied() == 1);
        }
    }
}
