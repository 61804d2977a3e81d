package org.jflannel.e2e;

import org.jflannel.testsupport.cluster.ClusterPerClass;
import org.jflannel.testsupport.cluster.NetnsCluster;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@link UpstreamDualStackTests} on wireguard (upstream's default Mode, separate: {@code flannel-wg} and
 * {@code flannel-wg-v6}), upstream flanneld v0.20.2 with its kernel WireGuard, ours in kernel mode; in the
 * kernel VM only ({@link UpstreamWireguardVmIT}).
 */
class UpstreamWireguardDualStackClusterInVm extends UpstreamDualStackTests {
    @RegisterExtension
    static final ClusterPerClass CLUSTER = clusterOn("wireguard");

    UpstreamWireguardDualStackClusterInVm(NetnsCluster cluster) {
        super(cluster);
    }

    @Override
    String[] upstreamLeaseSays() {
        return new String[] {"\"BackendData\":{\"PublicKey\":\"", "\"BackendV6Data\":{\"PublicKey\":\""};
    }
}
