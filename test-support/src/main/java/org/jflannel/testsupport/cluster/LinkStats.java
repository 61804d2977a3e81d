package org.jflannel.testsupport.cluster;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * A device's packet counters as its kernel keeps them ({@code /sys/class/net/<dev>/statistics}). For
 * a TUN such as upstream's {@code flannel0}: {@code rx} counts what the daemon wrote into it (packets
 * it took from peers), {@code tx} what the kernel routed into it for the daemon to read (packets for peers).
 */
public record LinkStats(String device, long rxPackets, long txPackets, long rxDropped, long txDropped) {
    static final String[] FILES = {"rx_packets", "tx_packets", "rx_dropped", "tx_dropped"};

    /** Reads {@code device}'s counters in namespace {@code netns} ({@code ip netns exec} mounts its own /sys). */
    static LinkStats read(String netns, String device) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("ip", "netns", "exec", netns, "cat"));
        for (String f : FILES) {
            cmd.add("/sys/class/net/" + device + "/statistics/" + f);
        }
        List<String> lines = Cmd.run(Duration.ofSeconds(10), cmd).orThrow().stdout().lines().toList();
        if (lines.size() != FILES.length) {
            throw new IOException("statistics of " + device + " in " + netns + ": expected " + FILES.length + " lines, got "
                    + lines);
        }
        long[] v = lines.stream().mapToLong(l -> Long.parseLong(l.strip())).toArray();
        return new LinkStats(device, v[0], v[1], v[2], v[3]);
    }

    /** What changed since {@code before}. */
    public LinkStats minus(LinkStats before) {
        return new LinkStats(device, rxPackets - before.rxPackets, txPackets - before.txPackets,
                rxDropped - before.rxDropped, txDropped - before.txDropped);
    }
}
