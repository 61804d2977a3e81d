package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import org.jflannel.testsupport.cluster.Bounds;
import org.jflannel.testsupport.cluster.ClusterNode;
import org.jflannel.testsupport.cluster.ClusterOptions;
import org.jflannel.testsupport.cluster.ClusterPerClass;
import org.jflannel.testsupport.cluster.Cmd;
import org.jflannel.testsupport.cluster.FlannelEntries;
import org.jflannel.testsupport.cluster.KernelFeatures;
import org.jflannel.testsupport.cluster.NetnsCluster;
import org.jflannel.testsupport.cluster.NodeLease;
import org.jflannel.testsupport.cluster.Wait;
import org.jflannel.linuxnet.netlink.Route;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The 3-node etcd cluster on the ipip backend, in the kernel VM only ({@link IpipClusterVmIT}: this
 * project's machines have no ipip module): every pod-to-pod packet between nodes crosses the nodes'
 * {@code flannel.ipip} tunnels. One cluster for the class; the test that takes a lease away runs last.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class EtcdIpipClusterInVm {
    static final Duration WITHIN = Bounds.scaled(Duration.ofSeconds(60));

    @RegisterExtension
    static final ClusterPerClass CLUSTER = ClusterPerClass.of(ClusterOptions.defaults().withBackend("ipip"));
    private final NetnsCluster cluster;

    EtcdIpipClusterInVm(NetnsCluster cluster) {
        this.cluster = cluster;
    }

    /** The demo's kernel check ({@code bin/demo --backend ipip}) finds ipip where the kernel has it (it once did not: EEXIST). */
    @Test
    @Order(0)
    void theDemosKernelCheckFindsIpip() throws Exception {
        assertThat(KernelFeatures.missingFor("ipip")).as("KernelFeatures.missingFor(ipip) in Debian's kernel").isEmpty();
    }

    @Test
    @Order(1)
    void everyPodReachesEveryOtherPod() throws Exception {
        assertThat(cluster.pods()).hasSize(6);
        Overlay.assertEveryPodReachesEveryOther(cluster);
    }

    @Test
    @Order(2)
    void eachNodeRoutesEachPeerOnlinkThroughFlannelIpipAndWritesUpstreamsLease() throws Exception {
        for (ClusterNode n : cluster.nodes()) {
            FlannelEntries dev = n.ipipDevice();
            assertThat(dev.link().kind()).isEqualTo("ipip");
            assertThat(n.lease().mtu()).as(n.name() + " FLANNEL_MTU: eth0's 1500 - 20").isEqualTo(1480);
            for (NodeLease peer : cluster.leases()) {
                if (peer.node().equals(n.name())) {
                    continue;
                }
                List<Route> r = dev.routesTo(peer.subnet());
                assertThat(r).as(n.name() + " route to " + peer.subnet()).hasSize(1);
                assertThat(r.get(0).gateway()).isEqualTo(peer.publicIp());
                assertThat(r.get(0).onlink()).isTrue();
            }
        }
        NodeLease l = cluster.node(1).lease();
        assertThat(cluster.etcdGet(NetnsCluster.leaseKey(l))).isEqualTo(
                "{\"PublicIP\":\"" + l.publicIp().getHostAddress() + "\",\"PublicIPv6\":null,\"BackendType\":\"ipip\"}");
    }

    @Test
    @Order(3)
    void routeDeletedByHandIsRestored() throws Exception {
        ClusterNode n1 = cluster.node(1);
        NodeLease peer = cluster.node(2).lease();
        Cmd.run(WITHIN, List.of("ip", "-n", n1.namespace(), "route", "del", peer.subnet(), "dev", "flannel.ipip")).orThrow();
        Wait.until("route to " + peer.subnet() + " back on " + n1.name(), WITHIN, n1::ipipDevice,
                e -> !e.routesTo(peer.subnet()).isEmpty());
        Overlay.assertEveryPodReachesEveryOther(cluster);
    }

    @Test
    @Order(4)
    void deviceAndRoutesStayWhileTheDaemonIsDownAndARestartLeavesThemUntouched() throws Exception {
        ClusterNode n1 = cluster.node(1);
        FlannelEntries before = n1.ipipDevice();
        assertThat(n1.stop()).as("exit code on SIGTERM").isZero();
        assertThat(n1.ipipDevice().routes()).as("routes with the daemon down").isEqualTo(before.routes());
        Overlay.assertEveryPodReachesEveryOther(cluster); // the kernel forwards; the daemon is not in the path

        n1.start();
        n1.awaitReady();
        cluster.awaitConverged();
        FlannelEntries after = n1.ipipDevice();
        assertThat(after.link().index()).as("the same device").isEqualTo(before.link().index());
        assertThat(after.routes()).isEqualTo(before.routes());
        assertThat(n1.logSinceStart()).contains("ipip device adopted").doesNotContain("stray route removed")
                .doesNotContain("route repaired").doesNotContain("recreating device");
    }

    @Test
    @Order(5)
    void leaseDeletedInEtcdRemovesItsRoutesOnTheOtherNodes() throws Exception {
        NodeLease lease = cluster.node(3).lease();
        assertThat(cluster.deleteLease(lease)).as("keys deleted").isEqualTo(1);
        for (ClusterNode other : List.of(cluster.node(1), cluster.node(2))) {
            Wait.until("route to " + lease.subnet() + " gone from " + other.name(), WITHIN, other::ipipDevice,
                    e -> e.routesTo(lease.subnet()).isEmpty());
        }
    }
}
