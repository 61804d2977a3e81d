package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import org.jflannel.testsupport.cluster.ClusterNode;
import org.jflannel.testsupport.cluster.ClusterOptions;
import org.jflannel.testsupport.cluster.ClusterPerClass;
import org.jflannel.testsupport.cluster.Cmd;
import org.jflannel.testsupport.cluster.KernelFeatures;
import org.jflannel.testsupport.cluster.NetnsCluster;
import org.jflannel.testsupport.cluster.Wait;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The 3-node etcd cluster of our daemons on the ipsec backend, in the kernel VM only ({@link EtcdIpsecVmIT}):
 * the host's kernel has no ESP. Each node's charon (its own /run, from the harness) negotiates with the
 * others', and every pod reaches every other through the kernel's ESP SAs. Its name matches neither tier's pattern.
 */
class EtcdIpsecClusterInVm {
    @RegisterExtension
    static final ClusterPerClass CLUSTER = ClusterPerClass.of(ClusterOptions.defaults().withBackend(EtcdIpsecNodeIT.BACKEND));
    private final NetnsCluster cluster;

    EtcdIpsecClusterInVm(NetnsCluster cluster) {
        this.cluster = cluster;
    }

    @Test
    void everyPodReachesEveryOtherPodOverEsp() throws Exception {
        assertThat(KernelFeatures.missingFor("ipsec")).as("the demo's kernel check (bin/demo --backend ipsec) in Debian's kernel")
                .isEmpty();
        assertThat(cluster.pods()).hasSize(6);
        for (ClusterNode n : cluster.nodes()) {
            // upstream's ipsec backend adds no routes: a node reaches the other pod subnets by its default route,
            // which the XFRM policies then divert into the tunnel. The harness's nodes have none: the fabric's bridge.
            Cmd.run(Duration.ofSeconds(30), List.of("ip", "-n", n.namespace(), "route", "replace", "default", "via", "192.0.2.1"));
        }
        try {
            // the SAs come up after the policies the harness waited for: IKE under emulation takes seconds
            Wait.until("every pod reaching every other over ipsec", Duration.ofMinutes(4),
                    () -> cluster.pingMatrix().failures().isEmpty());
            Overlay.assertEveryPodReachesEveryOther(cluster);
            for (ClusterNode n : cluster.nodes()) {
                assertThat(n.lease().mtu()).as("FLANNEL_MTU on %s", n.name()).isEqualTo(1423);
                String states = Cmd.run(Duration.ofSeconds(30), List.of("ip", "-n", n.namespace(), "xfrm", "state")).stdout();
                assertThat(states).as("%s's SAs", n.name()).contains("proto esp", "reqid 11", "mode tunnel");
            }
        } finally {
            for (ClusterNode n : cluster.nodes()) {
                List<String> lines = n.logSinceStart().lines().filter(l -> l.contains("ipsec") || l.contains("charon")
                        || l.contains("IKE") || l.contains("CHILD_SA")).toList();
                System.out.println("== " + n.name() + " (ipsec, charon and IKE lines, last 25)\n"
                        + String.join("\n", lines.subList(Math.max(0, lines.size() - 25), lines.size())));
            }
        }
    }
}
