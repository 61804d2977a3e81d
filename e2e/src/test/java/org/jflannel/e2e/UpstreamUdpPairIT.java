package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.jflannel.testsupport.cluster.ClusterNode;
import org.jflannel.testsupport.cluster.ClusterPerClass;
import org.jflannel.testsupport.cluster.NetnsCluster;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link UpstreamUdpPairTests} with our daemons as shipped: the udp defaults, nothing set, so the
 * kernel encapsulates to peers whose kernel has proven it takes that (only ours) and the packet
 * threads carry the rest: everything to and from an upstream node, and every datagram ours receive.
 */
@Tag("e2e")
class UpstreamUdpPairIT extends UpstreamUdpPairTests {
    @RegisterExtension
    static final ClusterPerClass CLUSTER = pairWith(Map.of());

    UpstreamUdpPairIT(NetnsCluster cluster) {
        super(cluster);
    }

    /**
     * As shipped: the kernel's encapsulation attached, decapsulation through the VXLAN-GPE device (a peer of ours'
     * kernel datagrams; an upstream peer's go to the packet threads); to a peer of ours the kernel encapsulated once proven, to an upstream
     * peer the packet threads sent (the counters add up since the daemon started, so only the packet
     * threads' share is checked there; that the kernel never sends upstream TCP is
     * {@link UpstreamUdpMisleadingLeaseIT}'s, and the ledger balanced above).
     */
    @Override
    void checkOurPath(ClusterNode n, boolean peerIsOurs) throws Exception {
        if (System.getenv("JFLANNEL_UDP_KERNEL") != null) {
            return; // the test's own environment switched the path (see UpstreamUdpPairTests): not as shipped
        }
        assertThat(n.logSinceStart()).as("%s log", n.name()).contains("udp kernel datapath attached").contains("mode=GPE")
                .doesNotContain("udp vxlan-gpe path left");
        if (peerIsOurs) {
            assertThat(n.metric("flanneld_udp_kernel_packets_total{direction=\"from_peers\"}")).as("%s kernel decap", n.name())
                    .isPositive();
            assertThat(n.logSinceStart()).as("%s log", n.name()).contains("udp kernel peer proven");
            assertThat(n.metric("flanneld_udp_kernel_packets_total{direction=\"to_peers\"}")).as("%s kernel encap", n.name())
                    .isPositive();
        } else {
            assertThat(n.metric("flanneld_udp_packets_total{direction=\"to_peers\"}")).as("%s packet threads", n.name())
                    .isPositive();
            assertThat(n.metric("flanneld_udp_packets_total{direction=\"from_peers\"}")).as("%s packet threads received", n.name())
                    .isPositive();
        }
    }
}
