package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.jflannel.testsupport.cluster.ClusterNode;
import org.jflannel.testsupport.cluster.ClusterPerClass;
import org.jflannel.testsupport.cluster.NetnsCluster;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link UpstreamUdpPairTests} with our opt-in udp kernel datapath on ({@code JFLANNEL_UDP_KERNEL=1}):
 * our programs decapsulate what the real upstream node sends, the packet threads send it upstream's
 * datagrams (it never says {@code KernelDecap}), and between two of ours after a switch the kernel
 * carries both ways.
 */
@Tag("e2e")
class UpstreamUdpPairKernelDatapathIT extends UpstreamUdpPairTests {
    @RegisterExtension
    static final ClusterPerClass CLUSTER = pairWith(Map.of("JFLANNEL_UDP_KERNEL", "1"));

    UpstreamUdpPairKernelDatapathIT(NetnsCluster cluster) {
        super(cluster);
    }

    /**
     * The switch took: our datapath is attached and decapsulated the peer's traffic; between two of
     * ours, each proved the other (its kernel was seen encapsulating) and sent it from the kernel too
     * (an upstream peer is never proven: {@link UpstreamUdpMisleadingLeaseIT}).
     */
    @Override
    void checkOurPath(ClusterNode n, boolean peerIsOurs) throws Exception {
        assertThat(n.logSinceStart()).as("%s log", n.name()).contains("udp kernel datapath attached");
        assertThat(n.metric("flanneld_udp_kernel_packets_total{direction=\"from_peers\"}")).as("%s kernel decap", n.name())
                .isPositive();
        if (peerIsOurs) {
            assertThat(n.logSinceStart()).as("%s log", n.name()).contains("udp kernel peer proven");
            assertThat(n.metric("flanneld_udp_kernel_packets_total{direction=\"to_peers\"}")).as("%s kernel encap", n.name())
                    .isPositive();
        }
    }
}
