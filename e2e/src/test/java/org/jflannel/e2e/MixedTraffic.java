package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.jflannel.testsupport.cluster.NetnsCluster;
import org.jflannel.testsupport.cluster.NodeKind;
import org.jflannel.testsupport.cluster.Pod;
import org.jflannel.testsupport.cluster.TcpTransfer;
import org.jflannel.testsupport.vm.KernelVm;

/** Traffic between pods of a cluster where some nodes run upstream flanneld: checked TCP streams. */
final class MixedTraffic {
    /**
     * 32 MB each way on the host: tens of thousands of full-size packets, enough for any batching to show. In
     * the kernel VM 4 MB (still thousands): its emulated CPU moved ours in userspace WireGuard at 4 Mbit/s on
     * a host without AVX-512, where 32 MB took over a minute.
     */
    static final long BYTES = KernelVm.inVm() ? 4L << 20 : 32L << 20;
    /**
     * Upstream's udp moves a few hundred Mbit/s on the host (32 MB in about a second); the VM's 4 MB take 8 s
     * at 4 Mbit/s. Either bound is many times that; a stall is caught sooner, by the receiver's idle limit.
     */
    static final Duration WITHIN = KernelVm.inVm() ? Duration.ofMinutes(4) : Duration.ofSeconds(90);

    private MixedTraffic() {
    }

    /** The first pod on node {@code i}. */
    static Pod podOn(NetnsCluster cluster, int i) {
        return cluster.pods().stream().filter(p -> p.node() == i).findFirst().orElseThrow();
    }

    /** The first pod on the first node of kind {@code kind}. */
    static Pod podOn(NetnsCluster cluster, NodeKind kind) {
        int i = cluster.nodes().stream().filter(n -> n.kind() == kind).findFirst().orElseThrow().index();
        return podOn(cluster, i);
    }

    /** A {@link #BYTES} stream from {@code from} to {@code to} arrives whole: same length and CRC-32 on both ends. */
    static TcpTransfer assertIntact(Pod from, Pod to) throws Exception {
        TcpTransfer t = TcpTransfer.run(from, to, BYTES, WITHIN);
        System.out.println("transfer: " + t);
        assertThat(t.intact()).as("%s", t).isTrue();
        return t;
    }
}
