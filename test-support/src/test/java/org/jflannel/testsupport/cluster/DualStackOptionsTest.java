package org.jflannel.testsupport.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeAddress;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The harness's dual-stack option: net-conf.json, validation, kube podCIDRs, the IPv6 half of leases, pod addresses. */
class DualStackOptionsTest {
    private static final ClusterOptions BASE = new ClusterOptions(3, 2, ClusterOptions.Mode.ETCD, "vxlan", "10.244.0.0/16",
            false, Path.of("/nonexistent"), Path.of("/tmp"), null, null, null, null);

    @TempDir
    Path dir;

    @Test
    void netConfCarriesEnableIpv6AndTheIpv6NetworkOnlyInDualStack() {
        assertThat(BASE.dualStack()).isFalse();
        assertThat(BASE.netConfJson()).doesNotContain("IPv6");
        ClusterOptions dual = BASE.withDualStack(ClusterOptions.DEFAULT_IPV6_NETWORK);
        assertThat(dual.dualStack()).isTrue();
        assertThat(dual.netConfJson()).isEqualTo("{\"Network\":\"10.244.0.0/16\",\"EnableIPv6\":true,"
                + "\"IPv6Network\":\"fd6a:f100:0:100::/56\",\"EnableNFTables\":false,\"Backend\":{\"Type\":\"vxlan\"}}");
        assertThat(dual.withBackend("wireguard").withNodes(2).ipv6Network()).as("kept by the other withers")
                .isEqualTo(ClusterOptions.DEFAULT_IPV6_NETWORK);
    }

    @Test
    void aBadIpv6NetworkIsRefusedNamingTheOption() {
        for (String bad : new String[] {"10.0.0.0/8", "fd00::/64", "fd00::1/56", "not-a-network"}) {
            assertThatThrownBy(() -> BASE.withDualStack(bad)).as(bad).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageStartingWith("IPv6 network: ");
        }
    }

    @Test
    void kubePodCidrsAreTheNetworksSlash64sInOrder() {
        assertThat(LeaseSource.ipv6PodCidr(ClusterOptions.DEFAULT_IPV6_NETWORK, 0)).isEqualTo("fd6a:f100:0:100::/64");
        assertThat(LeaseSource.ipv6PodCidr(ClusterOptions.DEFAULT_IPV6_NETWORK, 2)).isEqualTo("fd6a:f100:0:102::/64");
        assertThat(LeaseSource.ipv6PodCidr(ClusterOptions.DEFAULT_IPV6_NETWORK, 255)).isEqualTo("fd6a:f100:0:1ff::/64");
        assertThatThrownBy(() -> LeaseSource.ipv6PodCidr(ClusterOptions.DEFAULT_IPV6_NETWORK, 256))
                .hasMessageContaining("does not fit");
    }

    @Test
    void aDualStackMockNodeHasBothPodCidrsIpv4FirstAndAnInternalIpOfEach() {
        Node n = KubeApiServerMain.node("node1", "10.244.0.0/24,fd6a:f100:0:100::/64", "192.0.2.11,fd6a:f100::11");
        assertThat(n.getSpec().getPodCIDR()).isEqualTo("10.244.0.0/24");
        assertThat(n.getSpec().getPodCIDRs()).containsExactly("10.244.0.0/24", "fd6a:f100:0:100::/64");
        assertThat(n.getStatus().getAddresses()).extracting(NodeAddress::getType, NodeAddress::getAddress)
                .containsExactly(org.assertj.core.groups.Tuple.tuple("InternalIP", "192.0.2.11"),
                        org.assertj.core.groups.Tuple.tuple("InternalIP", "fd6a:f100::11"),
                        org.assertj.core.groups.Tuple.tuple("Hostname", "node1"));
        Node single = KubeApiServerMain.node("node2", "10.244.1.0/24", "192.0.2.12");
        assertThat(single.getSpec().getPodCIDRs()).containsExactly("10.244.1.0/24");
    }

    @Test
    void theIpv6HalfOfALeaseComesFromFlannelIpv6SubnetWithTheNetworkAddress() throws Exception {
        Path p = Files.writeString(dir.resolve("subnet.env"), "FLANNEL_NETWORK=10.244.0.0/16\nFLANNEL_SUBNET=10.244.3.1/24\n"
                + "FLANNEL_IPV6_NETWORK=fd6a:f100:0:100::/56\nFLANNEL_IPV6_SUBNET=fd6a:f100:0:103::1/64\nFLANNEL_MTU=1450\n"
                + "FLANNEL_IPMASQ=true\n");
        InetAddress pub6 = Inet.parse(ClusterNames.nodeIpv6(3));
        NodeLease l6 = new SubnetEnvFile(p).ipv6Lease("node3", pub6);
        assertThat(l6.subnet()).isEqualTo("fd6a:f100:0:103::/64");
        assertThat(l6.isIpv6()).isTrue();
        assertThat(l6.subnetAddress()).isEqualTo(InetAddress.getByName("fd6a:f100:0:103::"));
        assertThat(l6.publicIp()).isEqualTo(InetAddress.getByName("fd6a:f100::13"));
        assertThat(NetnsCluster.leaseKey(new SubnetEnvFile(p).lease("node3", Inet.parse("192.0.2.13")), l6))
                .isEqualTo("/coreos.com/network/subnets/10.244.3.0-24&fd6a:f100:0:103::-64");
        Path v4only = Files.writeString(dir.resolve("v4.env"), "FLANNEL_SUBNET=10.244.3.1/24\n");
        assertThatThrownBy(() -> new SubnetEnvFile(v4only).ipv6Lease("node3", pub6))
                .hasMessageContaining(v4only.toString()).hasMessageContaining("FLANNEL_IPV6_SUBNET");
    }

    @Test
    void aPodAnswersForEachFamilyAndAnIpv4OnlyPodHasNoIpv6Address() {
        Pod dual = new Pod("node1/pod1", 1, "ns", "10.244.3.2", "fd6a:f100:0:103::2");
        assertThat(dual.address(Pod.Family.IPV4)).isEqualTo("10.244.3.2");
        assertThat(dual.address(Pod.Family.IPV6)).isEqualTo("fd6a:f100:0:103::2");
        assertThat(Pod.Family.IPV6.flag()).isEqualTo("-6");
        Pod v4 = new Pod("node1/pod2", 1, "ns", "10.244.3.3");
        assertThatThrownBy(() -> v4.address(Pod.Family.IPV6)).hasMessageContaining("node1/pod2").hasMessageContaining("IPv6");
    }
}
