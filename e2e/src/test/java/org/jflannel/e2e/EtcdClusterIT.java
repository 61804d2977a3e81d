package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jflannel.core.MacAddress;
import org.jflannel.testsupport.cluster.ClusterNode;
import org.jflannel.testsupport.cluster.ClusterOptions;
import org.jflannel.testsupport.cluster.ClusterPerClass;
import org.jflannel.testsupport.cluster.FlannelEntries;
import org.jflannel.testsupport.cluster.NetnsCluster;
import org.jflannel.testsupport.cluster.NodeLease;
import org.jflannel.testsupport.cluster.PingStats;
import org.jflannel.testsupport.cluster.Pod;
import org.jflannel.testsupport.cluster.Wait;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The 3-node cluster with a real etcd, real flanneld processes and pods attached through the real
 * CNI chain. One cluster serves the whole class (starting one costs ~15 s); every test leaves it
 * converged again, and the one that takes a node away for good runs last.
 */
@Tag("e2e")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class EtcdClusterIT {
    private static final String STALE_SUBNET = "10.244.250.0/24";
    private static final String GARBAGE_SUBNET = "10.244.251.0/24";
    /** 600 echoes 50 ms apart: 30 s, room for a restart of the daemon on a loaded 2-core machine. */
    private static final int PING_COUNT = 600;

    @RegisterExtension
    static final ClusterPerClass CLUSTER = ClusterPerClass.of(ClusterOptions.defaults());
    private final NetnsCluster cluster;

    EtcdClusterIT(NetnsCluster cluster) {
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
    void eachNodeHoldsExactlyOneNeighbourFdbEntryAndRoutePerPeerWithUpstreamAttributes() throws Exception {
        for (ClusterNode n : cluster.nodes()) {
            Overlay.assertVtepAttributes(n);
        }
        Overlay.assertExactlyOneEntryPerPeer(cluster);
    }

    @Test
    @Order(3)
    void routeDeletedByHandIsBackWithin15Seconds() throws Exception {
        ClusterNode node = cluster.node(1);
        NodeLease peer = cluster.node(2).lease();
        node.deleteRoute(peer.subnet()); // acknowledged by the kernel; the daemon may put it back at once

        Wait.until("route to " + peer.subnet() + " back on " + node.name(), Duration.ofSeconds(15),
                () -> node.entries().routesTo(peer.subnet()).size() == 1);
        Overlay.assertExactlyOneEntryPerPeer(cluster);
    }

    @Test
    @Order(4)
    void vxlanDeviceDeletedIsRecreatedWithAllEntriesWithin30Seconds() throws Exception {
        ClusterNode node = cluster.node(2);
        int oldIndex = node.entries().link().index();
        List<NodeLease> peers = peersOf(node);
        node.deleteVxlanDevice();

        FlannelEntries back = Wait.until("flannel.1 recreated on " + node.name() + " with entries for " + peers,
                Duration.ofSeconds(30), node::entries, e -> e.linkPresent() && e.covers(peers));
        assertThat(back.link().index()).as("a new device").isNotEqualTo(oldIndex);
        Overlay.assertVtepAttributes(node);
        cluster.awaitConverged(); // its MAC may have changed: the peers follow the republished lease
        Overlay.assertExactlyOneEntryPerPeer(cluster);
        Overlay.assertEveryPodReachesEveryOther(cluster);
    }

    @Test
    @Order(5)
    void staleEntryPlantedWhileDaemonIsDownIsRemovedAfterRestart() throws Exception {
        ClusterNode node = cluster.node(3);
        assertThat(node.stop()).as("flanneld exit code after SIGTERM").isZero();
        node.plantPeerEntries(STALE_SUBNET, ipv4("192.0.2.250"), MacAddress.parse("0e:00:00:00:02:50"));
        NodeLease stale = new NodeLease("gone", STALE_SUBNET, ipv4("192.0.2.250"), 1450);
        assertThat(node.entries().free(stale)).as("stale entries planted").isFalse();

        node.start();
        node.awaitReady();
        Wait.until("stale entries for " + STALE_SUBNET + " removed on " + node.name(), Duration.ofSeconds(30),
                () -> node.entries().free(stale));
        cluster.awaitConverged();
        Overlay.assertExactlyOneEntryPerPeer(cluster);
    }

    @Test
    @Order(6)
    void daemonKilledAndRestartedDuringPingRunKeepsItsSubnetAndTheTraffic() throws Exception {
        ClusterNode node = cluster.node(1);
        Pod from = podOn(1);
        Pod to = podOn(2);
        NodeLease before = node.lease();
        CompletableFuture<PingStats> pings = CompletableFuture.supplyAsync(() -> {
            try {
                return cluster.pingRun(from, to, PING_COUNT, 50);
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
        node.kill();
        node.start();
        NodeLease after = node.awaitReady();
        assertThat(pings.isDone()).as("the ping run still going when flanneld is ready again").isFalse();
        PingStats stats = pings.get(90, TimeUnit.SECONDS);
        System.out.println("ping run across SIGKILL + restart of flanneld on " + node.name() + ": " + stats);

        assertThat(after.subnet()).as("subnet after SIGKILL and restart").isEqualTo(before.subnet());
        assertThat(stats.transmitted()).isEqualTo(PING_COUNT);
        assertThat(stats.answeredRatio()).as("answered share of %s", stats).isGreaterThanOrEqualTo(0.99);
        cluster.awaitConverged();
        Overlay.assertExactlyOneEntryPerPeer(cluster);
    }

    @Test
    @Order(7)
    void peerLeaseWithGarbageBackendDataIsSkippedWithALogLineAndTheOthersAreProgrammed() throws Exception {
        String key = "/coreos.com/network/subnets/" + GARBAGE_SUBNET.replace('/', '-');
        cluster.etcdPut(key, "{\"PublicIP\":\"192.0.2.251\",\"PublicIPv6\":null,\"BackendType\":\"vxlan\","
                + "\"BackendData\":{\"VNI\":1,\"VtepMAC\":\"not-a-mac\"}}");
        try {
            ClusterNode running = cluster.node(2);
            Wait.until(running.name() + " logs the skipped lease", Duration.ofSeconds(15),
                    () -> mentionsSkipped(running.logSinceStart()));

            ClusterNode restarted = cluster.node(3); // sees the garbage in its first snapshot
            restarted.stop();
            restarted.start();
            restarted.awaitReady();
            Wait.until(restarted.name() + " logs the skipped lease", Duration.ofSeconds(15),
                    () -> mentionsSkipped(restarted.logSinceStart()));
            cluster.awaitConverged();
            NodeLease garbage = new NodeLease("garbage", GARBAGE_SUBNET, ipv4("192.0.2.251"), 1450);
            for (ClusterNode n : cluster.nodes()) {
                assertThat(n.entries().free(garbage)).as("no entry for the garbage lease on %s", n.name()).isTrue();
            }
            Overlay.assertExactlyOneEntryPerPeer(cluster);
            Overlay.assertEveryPodReachesEveryOther(cluster);
        } finally {
            cluster.etcdDelete(key);
        }
    }

    @Test
    @Order(8)
    void leaseDeletedInEtcdTakesItsEntriesOffTheOtherNodesWithin10Seconds() throws Exception {
        ClusterNode victim = cluster.node(3);
        NodeLease lease = victim.lease();
        for (ClusterNode other : List.of(cluster.node(1), cluster.node(2))) {
            assertThat(other.entries().free(lease)).as("entries of %s on %s before", lease.subnet(), other.name())
                    .isFalse();
        }
        assertThat(cluster.deleteLease(lease)).as("keys deleted").isEqualTo(1);

        for (ClusterNode other : List.of(cluster.node(1), cluster.node(2))) {
            Wait.until("entries of " + lease.subnet() + " gone from " + other.name(), Duration.ofSeconds(10),
                    () -> other.entries().free(lease));
        }
    }

    private boolean mentionsSkipped(String log) {
        String key = GARBAGE_SUBNET.replace('/', '-');
        return log.lines().filter(l -> (l.contains(key) || l.contains(GARBAGE_SUBNET))
                && (l.contains("error decoding") || l.contains("skipped")))
                .peek(l -> System.out.println("skip log line: " + l)).findFirst().isPresent();
    }

    private List<NodeLease> peersOf(ClusterNode node) throws Exception {
        return cluster.leases().stream().filter(l -> !l.node().equals(node.name())).toList();
    }

    private Pod podOn(int node) {
        return cluster.pods().stream().filter(p -> p.node() == node).findFirst().orElseThrow();
    }

    private static java.net.InetAddress ipv4(String dotted) {
        return org.jflannel.core.Ip4Net.toInet(org.jflannel.core.Ip4Net.parseAddress(dotted));
    }
}
