package org.jflannel.e2e;

import org.jflannel.testsupport.cluster.ClusterNode;
import org.jflannel.testsupport.cluster.ClusterPerClass;
import org.jflannel.testsupport.cluster.NetnsCluster;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link UpstreamDualStackTests} on vxlan, the cluster of {@link EtcdDualStackClusterIT}: upstream also
 * programs {@code flannel-v6.1} for our leases while ours program it for its lease, one entry per peer.
 */
@Tag("e2e")
class UpstreamDualStackClusterIT extends UpstreamDualStackTests {
    @RegisterExtension
    static final ClusterPerClass CLUSTER = clusterOn("vxlan");

    UpstreamDualStackClusterIT(NetnsCluster cluster) {
        super(cluster);
    }

    @Override
    String[] upstreamLeaseSays() {
        return new String[] {"\"BackendV6Data\":{\"VNI\":1,\"VtepMAC\":\""};
    }

    @Test
    @Order(4)
    void everyNodeUpstreamsTooHoldsExactlyOneIpv6EntryPerPeerOnFlannelV61() throws Exception {
        for (ClusterNode n : cluster.nodes()) {
            DualStack.assertV6VtepAttributes(n);
        }
        Overlay.assertExactlyOneEntryPerPeer(cluster);
        DualStack.assertExactlyOneV6EntryPerPeer(cluster);
    }
}
