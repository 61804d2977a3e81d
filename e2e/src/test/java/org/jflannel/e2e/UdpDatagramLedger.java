package org.jflannel.e2e;

import java.time.Duration;
import org.jflannel.testsupport.cluster.ClusterNode;
import org.jflannel.testsupport.cluster.LinkStats;
import org.jflannel.testsupport.cluster.NodeKind;
import org.jflannel.testsupport.cluster.UdpSnmp;
import org.jflannel.testsupport.cluster.Wait;

/**
 * "Nothing is lost inside our path", between one of our udp nodes and an upstream one, as the
 * kernel-datapath figures in docs/benchmarks.md were checked. Each node of a pair has only the other
 * as peer, so these counters cover the same traffic and must balance exactly:
 * <ul>
 *   <li>ours to upstream: what our daemon counts as sent to peers (packet threads' datagrams plus the
 *       kernel datapath's encapsulations) all arrived at upstream's node ({@code /proc/net/snmp}:
 *       delivered to its socket, or dropped there for a full receive buffer, upstream's own loss,
 *       reported); none had a bad checksum; and upstream wrote every delivered one into its flannel0
 *       ({@code rx_packets}), so it found each a whole, valid packet;</li>
 *   <li>upstream to ours: what upstream read from its flannel0 ({@code tx_packets}, each sent as one
 *       datagram) is what ours counts as received (packet threads plus kernel decapsulations).</li>
 * </ul>
 * IPv6 is switched off on upstream's flannel0 first: the kernel's router solicitations and MLD
 * reports there are read (counted) and dropped by upstream, never sent.
 */
final class UdpDatagramLedger {
    private static final Duration SETTLED_WITHIN = Duration.ofSeconds(20);

    /** Our counters: datagrams to peers and from peers, both paths together. */
    record Ours(long sent, long received) {
        Ours minus(Ours o) {
            return new Ours(sent - o.sent, received - o.received);
        }
    }

    /** Both ends at one moment. */
    record Snapshot(Ours ours, UdpSnmp upstreamUdp, LinkStats upstreamTun) {
        Snapshot minus(Snapshot o) {
            return new Snapshot(ours.minus(o.ours), upstreamUdp.minus(o.upstreamUdp), upstreamTun.minus(o.upstreamTun));
        }

        long arrivedUpstream() {
            return upstreamUdp.inDatagrams() + upstreamUdp.rcvbufErrors();
        }

        boolean balanced() {
            return ours.sent == arrivedUpstream() && upstreamUdp.inCsumErrors() == 0
                    && upstreamTun.rxPackets() == upstreamUdp.inDatagrams() && upstreamTun.txPackets() == ours.received;
        }

        @Override
        public String toString() {
            return "ours sent " + ours.sent + " / arrived upstream " + arrivedUpstream() + " (delivered " + upstreamUdp.inDatagrams()
                    + ", dropped by upstream's full socket buffer " + upstreamUdp.rcvbufErrors() + ", bad checksum "
                    + upstreamUdp.inCsumErrors() + ", written to its flannel0 " + upstreamTun.rxPackets()
                    + "); upstream read from flannel0 " + upstreamTun.txPackets() + " / ours received " + ours.received
                    + " (upstream flannel0 dropped rx " + upstreamTun.rxDropped() + " tx " + upstreamTun.txDropped() + ")";
        }
    }

    private final ClusterNode ours;
    private final ClusterNode upstream;
    private Snapshot before;

    private UdpDatagramLedger(ClusterNode ours, ClusterNode upstream) {
        this.ours = ours;
        this.upstream = upstream;
    }

    /** Starts counting between {@code ours} and {@code upstream} (a quiet moment: no packet in flight). */
    static UdpDatagramLedger open(ClusterNode ours, ClusterNode upstream) throws Exception {
        if (ours.kind() != NodeKind.JFLANNEL || upstream.kind() != NodeKind.UPSTREAM) {
            throw new IllegalArgumentException("ledger between ours and upstream, got " + ours.kind() + " and " + upstream.kind());
        }
        upstream.writeSysctl("net/ipv6/conf/" + ClusterNode.UDP_DEVICE + "/disable_ipv6", "1");
        UdpDatagramLedger l = new UdpDatagramLedger(ours, upstream);
        l.before = l.quietSnapshot();
        return l;
    }

    /**
     * Waits (bounded) until the traffic since {@link #open} balances both ways and returns it; a
     * datagram lost between our counters and upstream's flannel0 keeps it unbalanced, and the wait
     * fails with the last counts seen.
     */
    Snapshot awaitBalanced(String what) throws Exception {
        return Wait.until(what + ": every datagram counted by our daemon seen by upstream's flannel0 and back",
                SETTLED_WITHIN, () -> snapshot().minus(before), Snapshot::balanced);
    }

    private Snapshot quietSnapshot() throws Exception {
        return Wait.until("a quiet moment between " + ours.name() + " and " + upstream.name(), SETTLED_WITHIN,
                () -> {
                    Snapshot a = snapshot();
                    return a.equals(snapshot()) ? a : null; // nothing moved while both ends were read, twice
                }, s -> s != null);
    }

    private Snapshot snapshot() throws Exception {
        return new Snapshot(ours(), upstream.udpSnmp(), upstream.linkStats(ClusterNode.UDP_DEVICE));
    }

    private Ours ours() throws Exception {
        return new Ours(count(ours, "flanneld_udp_packets_total{direction=\"to_peers\"}")
                + count(ours, "flanneld_udp_kernel_packets_total{direction=\"to_peers\"}"),
                count(ours, "flanneld_udp_packets_total{direction=\"from_peers\"}")
                + count(ours, "flanneld_udp_kernel_packets_total{direction=\"from_peers\"}"));
    }

    /** A counter that has not counted yet is absent from /metrics. */
    private static long count(ClusterNode n, String sample) throws Exception {
        return Math.max(0, (long) n.metric(sample));
    }
}
