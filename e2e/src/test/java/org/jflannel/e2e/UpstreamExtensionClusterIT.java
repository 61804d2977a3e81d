package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.time.Duration;
import org.jflannel.testsupport.cluster.ClusterNode;
import org.jflannel.testsupport.cluster.ClusterPerClass;
import org.jflannel.testsupport.cluster.NetnsCluster;
import org.jflannel.testsupport.cluster.NodeKind;
import org.jflannel.testsupport.cluster.NodeLease;
import org.jflannel.testsupport.cluster.Wait;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link UpstreamNodeClusterTests} on the extension backend with {@link EtcdExtensionClusterIT}'s
 * commands (host-gw's route per peer): upstream v0.20.2 on node 2 runs them through {@code sh -c},
 * ours split them on white space and expand {@code $SUBNET} and {@code $PUBLIC_IP} ourselves, as
 * upstream v0.28.9 does. These commands mean the same either way (no quoting, no shell syntax, the
 * variables' values have no spaces), so the routes each kind makes for the other's leases carry every
 * pod's traffic; a peer leaving runs the remove command on both kinds.
 */
@Tag("e2e")
class UpstreamExtensionClusterIT extends UpstreamNodeClusterTests {
    /** What upstream logs for each command it ran (klog: {@code Ran command: <the configured string>}). */
    private static final String UPSTREAM_RAN = "Ran command: ";
    private static final String ADD = "ip route replace $SUBNET via $PUBLIC_IP dev eth0";
    private static final String REMOVE = "ip route del $SUBNET via $PUBLIC_IP dev eth0";

    @RegisterExtension
    static final ClusterPerClass CLUSTER = clusterOn(EtcdExtensionClusterIT.BACKEND);

    UpstreamExtensionClusterIT(NetnsCluster cluster) {
        super(cluster);
    }

    @Test
    void bothKindsPublishThePreStartupOutputAsTheLeasesBackendData() throws Exception {
        for (ClusterNode n : cluster.nodes()) {
            NodeLease l = n.lease();
            assertThat(cluster.etcdGet(NetnsCluster.leaseKey(l))).as("lease of %s (%s)", n.name(), n.kind())
                    .contains("\"BackendType\":\"extension\"").contains("\"BackendData\":\"route-by-ip\"");
        }
    }

    @Test
    void eachKindRanTheAddCommandForEveryPeer() throws Exception {
        for (ClusterNode n : cluster.nodes()) {
            for (ClusterNode peer : cluster.nodes()) {
                if (peer != n) {
                    String subnet = peer.lease().subnet();
                    Wait.until(n.name() + " (" + n.kind() + ") logging the add command for " + subnet, HostGwOverlay.WITHIN,
                            () -> ranAfter(n, n.kind() == NodeKind.UPSTREAM ? "Subnet added: " + subnet + " " : null,
                                    "subnet-add", subnet, ADD));
                }
            }
        }
    }

    @Test
    void aPeerLeavingRunsTheRemoveCommandOnBothKinds() throws Exception {
        String subnet = HostGwOverlay.UPSTREAM_SUBNET;
        String key = "/coreos.com/network/subnets/" + subnet.replace('/', '-');
        cluster.etcdPutWithTtl(key, "{\"PublicIP\":\"" + HostGwOverlay.UPSTREAM_IP + "\",\"BackendType\":\"extension\",\"BackendData\":\"x\"}",
                Duration.ofHours(1));
        HostGwOverlay.awaitRouteOnEveryNode(cluster, subnet, InetAddress.getByName(HostGwOverlay.UPSTREAM_IP));

        assertThat(cluster.etcdDelete(key)).isEqualTo(1);
        HostGwOverlay.awaitRouteOnEveryNode(cluster, subnet, null);
        for (ClusterNode n : cluster.nodes()) {
            // The route is gone before the daemon has read the command's exit and logged it: wait for the line.
            Wait.until(n.name() + " (" + n.kind() + ") logging the remove command", HostGwOverlay.WITHIN,
                    () -> ranAfter(n, n.kind() == NodeKind.UPSTREAM ? "Subnet removed: " + subnet : null,
                            "subnet-remove", subnet, REMOVE));
        }
        assertThat(cluster.nodes()).allSatisfy(n -> assertThat(n.daemon()).hasValueSatisfying(p -> assertThat(p.isAlive()).isTrue()));
    }

    /**
     * Whether {@code n} logged a successful run of {@code command} for {@code subnet}. Ours: one line
     * with phase and subnet. Upstream names no subnet in its {@code Ran command} line, but runs each
     * event's command right after logging the event ({@code upstreamEvent}), one event at a time: the
     * first command line after the event's line is that event's.
     */
    private static boolean ranAfter(ClusterNode n, String upstreamEvent, String phase, String subnet, String command)
            throws Exception {
        String log = n.logSinceStart();
        if (n.kind() == NodeKind.JFLANNEL) {
            return log.contains("extension command ran phase=" + phase + " subnet=" + subnet + " command=\"" + command + "\"");
        }
        int event = log.lastIndexOf(upstreamEvent);
        if (event < 0) {
            return false;
        }
        int ran = log.indexOf(UPSTREAM_RAN, event);
        int failed = log.indexOf("failed to run command: ", event);
        return ran >= 0 && (failed < 0 || ran < failed) && log.startsWith(UPSTREAM_RAN + command, ran);
    }
}
