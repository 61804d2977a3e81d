package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Map;
import org.jflannel.testsupport.cluster.ClusterNode;
import org.jflannel.testsupport.cluster.ClusterOptions;
import org.jflannel.testsupport.cluster.ClusterPerClass;
import org.jflannel.testsupport.cluster.NetnsCluster;
import org.jflannel.testsupport.cluster.NodeKind;
import org.jflannel.testsupport.cluster.Pod;
import org.jflannel.testsupport.cluster.TcpTransfer;
import org.jflannel.testsupport.cluster.Wait;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Issue 18's stall, made on purpose: our node runs the opt-in kernel datapath beside a real upstream
 * flanneld v0.20.2 whose lease says {@code {"KernelDecap":true}} (as a stale lease does until the peer's
 * new one arrives, or a mistaken write). Before the datapath asked for proof, our kernel sent that
 * peer what only a decapsulating kernel takes, whole TCP super-packets and partial inner checksums,
 * and upstream's stack dropped them: pings passed, TCP in either direction did not even connect
 * (f72340e). Now the kernel sends TCP and UDP only to a peer whose kernel has been seen encapsulating to
 * us, which upstream never does: the packet threads carry them and every datagram is accounted for.
 */
@Tag("e2e")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class UpstreamUdpMisleadingLeaseIT {
    @RegisterExtension
    static final ClusterPerClass CLUSTER = ClusterPerClass.of(ClusterOptions.defaults().withNodes(2)
            .withPodsPerNode(1).withBackend("udp").withUpstreamNodes(1).withDaemonEnv(Map.of("JFLANNEL_UDP_KERNEL", "1")));
    private final NetnsCluster cluster;

    UpstreamUdpMisleadingLeaseIT(NetnsCluster cluster) {
        this.cluster = cluster;
    }

    @Test
    void anUpstreamPeerWhoseLeaseClaimsKernelDecapGetsWholeTcpBothWays() throws Exception {
        ClusterNode upstream = cluster.node(1);
        ClusterNode ours = cluster.node(2);
        assertThat(upstream.kind()).isEqualTo(NodeKind.UPSTREAM);
        String key = NetnsCluster.leaseKey(upstream.lease());
        String value = cluster.etcdGet(key);
        assertThat(value).as("upstream's lease").doesNotContain("KernelDecap").endsWith("}");
        String claimed = value.substring(0, value.length() - 1) + ",\"BackendData\":{\"KernelDecap\":true}}";
        cluster.etcdPutKeepingLease(key, claimed);
        String subnet = upstream.lease().subnet().toString();
        Wait.until("our node takes upstream's lease as one that decapsulates in its kernel", Duration.ofSeconds(30),
                () -> ours.logSinceStart().lines().filter(l -> l.contains("lease added subnet=" + subnet))
                        .reduce((a, b) -> b).orElse("").contains("kernelDecap=true"));
        assertThat(ours.logSinceStart()).contains("udp kernel datapath attached");

        Pod p1 = MixedTraffic.podOn(cluster, 1);
        Pod p2 = MixedTraffic.podOn(cluster, 2);
        UdpDatagramLedger ledger = UdpDatagramLedger.open(ours, upstream);
        assertThat(cluster.pingRun(p2, p1, 3, 200).received()).as("pings ours -> upstream").isEqualTo(3);
        assertThat(cluster.pingRun(p1, p2, 3, 200).received()).as("pings upstream -> ours").isEqualTo(3);
        TcpTransfer there = TcpTransfer.run(p2, p1, MixedTraffic.BYTES, MixedTraffic.WITHIN);
        TcpTransfer back = TcpTransfer.run(p1, p2, MixedTraffic.BYTES, MixedTraffic.WITHIN);
        System.out.println("transfer: " + there + "\ntransfer: " + back);
        System.out.println("kernel to_peers " + ours.metric("flanneld_udp_kernel_packets_total{direction=\"to_peers\"}")
                + ", packet threads to_peers " + ours.metric("flanneld_udp_packets_total{direction=\"to_peers\"}"));
        System.out.println("ledger: " + ledger.awaitBalanced("the transfers"));

        assertThat(cluster.etcdGet(key)).as("the claim still stands (upstream did not rewrite its lease)").isEqualTo(claimed);
        assertThat(there.intact()).as("ours -> upstream: %s", there).isTrue();
        assertThat(back.intact()).as("upstream -> ours: %s", back).isTrue();
        assertThat(ours.logSinceStart()).as("upstream never proves itself")
                .doesNotContain("udp kernel peer proven");
    }
}
