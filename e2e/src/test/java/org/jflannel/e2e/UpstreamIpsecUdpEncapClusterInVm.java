package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import org.jflannel.testsupport.cluster.ClusterNode;
import org.jflannel.testsupport.cluster.ClusterOptions;
import org.jflannel.testsupport.cluster.ClusterPerClass;
import org.jflannel.testsupport.cluster.Cmd;
import org.jflannel.testsupport.cluster.NetnsCluster;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link UpstreamIpsecClusterInVm} with {@code "UDPEncap": true}, in the kernel VM only ({@link UpstreamIpsecVmIT}):
 * upstream flanneld v0.20.2 on node 2, ours on nodes 1 and 3, ESP in UDP 4500 between every pair (each side's
 * connection says {@code encap = true}: charon fakes NAT detection). NOT YET RUN: this project's machine has no
 * upstream binaries (JFLANNEL_UPSTREAM_DIR); docs/ipsec.md says so.
 */
class UpstreamIpsecUdpEncapClusterInVm {
    static final String BACKEND = "{\"Type\":\"ipsec\",\"PSK\":\"" + EtcdIpsecNodeIT.PSK + "\",\"UDPEncap\":true}";

    @RegisterExtension
    static final ClusterPerClass CLUSTER = ClusterPerClass.of(ClusterOptions.defaults().withBackend(BACKEND)
            .withUpstreamNodes(UpstreamIpsecClusterInVm.UPSTREAM_NODE));
    private final NetnsCluster cluster;

    UpstreamIpsecUdpEncapClusterInVm(NetnsCluster cluster) {
        this.cluster = cluster;
    }

    @Test
    void everyPodReachesEveryOtherPodAndTcpCrossesBothWaysOverEspInUdp() throws Exception {
        UpstreamIpsecClusterInVm.assertMixedClusterWorks(cluster);
        for (ClusterNode n : cluster.nodes()) {
            String states = Cmd.run(Duration.ofSeconds(30), List.of("ip", "-n", n.namespace(), "xfrm", "state")).stdout();
            assertThat(states).as("%s's SAs: ESP in UDP 4500", n.name()).contains("proto esp", "reqid 11",
                    "encap type espinudp sport 4500 dport 4500");
            assertThat(n.lease().mtu()).as("FLANNEL_MTU on %s: 1500 - 77 - 8 (ours; upstream computes the same)", n.name())
                    .isEqualTo(1415);
        }
    }
}
