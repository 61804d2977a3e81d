package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
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
 * The 3-node etcd cluster on upstream's extension backend, its data plane written as commands the
 * way an operator would: host-gw's route per peer ({@code ip route replace $SUBNET via $PUBLIC_IP})
 * when a lease comes, its removal when the lease goes. The commands run without a shell, as
 * upstream runs them; the pre-startup output travels in each lease.
 */
@Tag("e2e")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class EtcdExtensionClusterIT {
    static final String BACKEND = "{\"Type\":\"extension\",\"PreStartupCommand\":\"echo route-by-ip\","
            + "\"SubnetAddCommand\":\"ip route replace $SUBNET via $PUBLIC_IP dev eth0\","
            + "\"SubnetRemoveCommand\":\"ip route del $SUBNET via $PUBLIC_IP dev eth0\"}";

    @RegisterExtension
    static final ClusterPerClass CLUSTER = ClusterPerClass.of(ClusterOptions.defaults().withBackend(BACKEND));
    private final NetnsCluster cluster;

    EtcdExtensionClusterIT(NetnsCluster cluster) {
        this.cluster = cluster;
    }

    @Test
    @Order(1)
    void everyPodReachesEveryOtherPodThroughTheRoutesTheCommandsMade() throws Exception {
        assertThat(cluster.pods()).hasSize(6);
        Overlay.assertEveryPodReachesEveryOther(cluster);
        for (ClusterNode n : cluster.nodes()) {
            // The route is there before the daemon has read the command's exit and logged it: wait for the line.
            Wait.until(n.name() + " logging the add command", HostGwOverlay.WITHIN,
                    () -> n.logSinceStart().contains("extension command ran phase=subnet-add"));
            assertThat(n.lease().mtu()).as("FLANNEL_MTU on %s: the interface's", n.name()).isEqualTo(1500);
        }
    }

    @Test
    @Order(2)
    void eachLeaseCarriesTheTypeAndThePreStartupOutputAsUpstreamWritesThem() throws Exception {
        NodeLease l = cluster.node(1).lease();
        assertThat(cluster.etcdGet(NetnsCluster.leaseKey(l))).isEqualTo("{\"PublicIP\":\"" + l.publicIp().getHostAddress()
                + "\",\"PublicIPv6\":null,\"BackendType\":\"extension\",\"BackendData\":\"route-by-ip\"}");
    }

    @Test
    @Order(3)
    void aPeerLeavingRunsTheRemoveCommand() throws Exception {
        String key = "/coreos.com/network/subnets/" + HostGwOverlay.UPSTREAM_SUBNET.replace('/', '-');
        cluster.etcdPut(key, "{\"PublicIP\":\"" + HostGwOverlay.UPSTREAM_IP + "\",\"BackendType\":\"extension\",\"BackendData\":\"x\"}");
        HostGwOverlay.awaitRouteOnEveryNode(cluster, HostGwOverlay.UPSTREAM_SUBNET, InetAddress.getByName(HostGwOverlay.UPSTREAM_IP));

        assertThat(cluster.etcdDelete(key)).isEqualTo(1);
        HostGwOverlay.awaitRouteOnEveryNode(cluster, HostGwOverlay.UPSTREAM_SUBNET, null);
        for (ClusterNode n : cluster.nodes()) {
            // The command's route is gone before the daemon has read its exit and logged the run: wait for the line.
            Wait.until(n.name() + " logging the remove command", HostGwOverlay.WITHIN, () -> n.logSinceStart()
                    .contains("extension command ran phase=subnet-remove subnet=" + HostGwOverlay.UPSTREAM_SUBNET));
        }
    }

    @Test
    @Order(4)
    void aFailingCommandAndBadBackendDataAreLoggedWhileLaterLeasesStillRun() throws Exception {
        String offSegment = "/coreos.com/network/subnets/" + HostGwOverlay.OFF_SEGMENT_SUBNET.replace('/', '-');
        cluster.etcdPut(offSegment, "{\"PublicIP\":\"" + HostGwOverlay.OFF_SEGMENT_IP + "\",\"BackendType\":\"extension\"}");
        String badData = "/coreos.com/network/subnets/10.244.251.0-24";
        cluster.etcdPut(badData, "{\"PublicIP\":\"192.0.2.51\",\"BackendType\":\"extension\",\"BackendData\":{\"not\":\"a string\"}}");
        String good = "/coreos.com/network/subnets/" + HostGwOverlay.UPSTREAM_SUBNET.replace('/', '-');
        cluster.etcdPut(good, "{\"PublicIP\":\"" + HostGwOverlay.UPSTREAM_IP + "\",\"BackendType\":\"extension\"}");

        HostGwOverlay.awaitRouteOnEveryNode(cluster, HostGwOverlay.UPSTREAM_SUBNET, InetAddress.getByName(HostGwOverlay.UPSTREAM_IP));
        for (ClusterNode n : cluster.nodes()) {
            Wait.until(n.name() + " logging the failed add", HostGwOverlay.WITHIN, () -> n.logSinceStart()
                    .contains("extension command failed phase=subnet-add subnet=" + HostGwOverlay.OFF_SEGMENT_SUBNET));
            assertThat(n.logSinceStart()).contains("error=\"exit status 2\"")
                    .contains("lease skipped: BackendData is not a JSON string subnet=10.244.251.0/24");
            assertThat(n.daemon()).as("daemon on %s", n.name()).hasValueSatisfying(p -> assertThat(p.isAlive()).isTrue());
        }
        Overlay.assertEveryPodReachesEveryOther(cluster);
        cluster.etcdDelete(offSegment);
        cluster.etcdDelete(badData);
        cluster.etcdDelete(good);
    }
}
