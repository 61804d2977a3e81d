package org.jflannel.testsupport.cluster;

import java.util.Map;

/**
 * A device's packet counters as its kernel keeps them ({@code /sys/class/net/<dev>/statistics}). For
 * a TUN such as upstream's {@code flannel0}: {@code rx} counts what the daemon wrote into it (packets
 * it took from peers), {@code tx} what the kernel routed into it for the daemon to read (packets for peers).
 */
public record LinkStats(String device, long rxPackets, long txPackets, long rxDropped, long txDropped) {
    static final String[] FILES = {"rx_packets", "tx_packets", "rx_dropped", "tx_dropped"};

    static LinkStats of(String device, Map<String, Long> values) {
        return new LinkStats(device, values.get("rx_packets"), values.get("tx_packets"), values.get("rx_dropped"),
                values.get("tx_dropped"));
    }

    /** What changed since {@code before}. */
    public LinkStats minus(LinkStats before) {
        return new LinkStats(device, rxPackets - before.rxPackets, txPackets - before.txPackets,
                rxDropped - before.rxDropped, txDropped - before.txDropped);
    }
}
