package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.jflannel.testsupport.cluster.NetnsCluster;
import org.jflannel.testsupport.cluster.NodeKind;
import org.jflannel.testsupport.cluster.Pod;
import org.jflannel.testsupport.cluster.TcpTransfer;

/** Traffic between pods of a cluster where some nodes run upstream flanneld: checked TCP streams. */
final class MixedTraffic {
    /** 32 MB each way: tens of thousands of full-size packets, enough for any batching to show. */
    static final long BYTES = 32L << 20;
    /** Upstream's udp moves a few hundred Mbit/s here; a stall ends long before this. */
    static final Duration WITHIN = Duration.ofSeconds(60);

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
