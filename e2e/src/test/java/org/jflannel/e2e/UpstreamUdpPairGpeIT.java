package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import org.jflannel.testsupport.cluster.ClusterNode;
import org.jflannel.testsupport.cluster.ClusterPerClass;
import org.jflannel.testsupport.cluster.NetnsCluster;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link UpstreamUdpPairTests} with our nodes on {@code JFLANNEL_UDP_KERNEL=gpe} (the kernel encapsulates, and
 * decapsulates through a VXLAN-GPE device): the real upstream node's datagrams (UDP-checksummed, never from a
 * kernel) still go to our socket and packet threads, and between two of ours after a switch each kernel proves the
 * other and both directions run in the kernels.
 */
@Tag("e2e")
class UpstreamUdpPairGpeIT extends UpstreamUdpPairTests {
    @RegisterExtension
    static final ClusterPerClass CLUSTER = pairWith(Map.of("JFLANNEL_UDP_KERNEL", "gpe"));

    UpstreamUdpPairGpeIT(NetnsCluster cluster) {
        super(cluster);
    }

    @Override
    void checkOurPath(ClusterNode n, boolean peerIsOurs) throws Exception {
        assertThat(n.logSinceStart()).as("%s log", n.name()).contains("udp kernel decapsulation through a vxlan-gpe device");
        if (peerIsOurs) {
            assertThat(n.logSinceStart()).as("%s log", n.name()).contains("udp kernel peer proven")
                    .contains("udp vxlan-gpe path delivers"); // its trial passed
            assertThat(n.metric("flanneld_udp_kernel_packets_total{direction=\"to_peers\"}")).as("%s kernel encap", n.name())
                    .isPositive();
            assertThat(n.metric("flanneld_udp_kernel_packets_total{direction=\"from_peers\"}")).as("%s kernel decap", n.name())
                    .isPositive();
            assertThat(n.metric("flanneld_udp_kernel_gpe_delivered_packets_total")).as("%s GPE gate", n.name()).isPositive();
            assertThat(n.metric("flanneld_udp_kernel_path{path=\"gpe\"}")).as("%s on the GPE path", n.name()).isEqualTo(1.0);
        } else {
            assertThat(n.metric("flanneld_udp_packets_total{direction=\"from_peers\"}"))
                    .as("%s packet threads took the upstream node's datagrams", n.name()).isPositive();
        }
    }
}
