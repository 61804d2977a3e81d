package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.jflannel.testsupport.cluster.ClusterNode;
import org.junit.jupiter.api.Tag;

/**
 * {@link UpstreamUdpPairTests} with our udp kernel datapath off ({@code JFLANNEL_UDP_KERNEL=0}): the
 * packet threads alone (offloads, GRO, coalescing, queues as shipped) carry everything both ways, so
 * the other udp path of ours meets the real upstream too. (Where the packet threads are the default,
 * this class should switch the kernel datapath on instead.)
 */
@Tag("e2e")
class UpstreamUdpPairPacketThreadsIT extends UpstreamUdpPairTests {
    @Override
    Map<String, String> daemonEnv() {
        return Map.of("JFLANNEL_UDP_KERNEL", "0");
    }

    /** The switch took: nothing went through a kernel datapath, and our leases do not claim one. */
    @Override
    void checkOurPath(ClusterNode n) throws Exception {
        assertThat(n.metric("flanneld_udp_kernel_packets_total{direction=\"to_peers\"}")).as("%s kernel encap", n.name())
                .isLessThanOrEqualTo(0);
        assertThat(n.metric("flanneld_udp_kernel_packets_total{direction=\"from_peers\"}")).as("%s kernel decap", n.name())
                .isLessThanOrEqualTo(0);
        assertThat(n.metric("flanneld_udp_packets_total{direction=\"to_peers\"}")).as("%s packet threads", n.name())
                .isPositive();
    }
}
