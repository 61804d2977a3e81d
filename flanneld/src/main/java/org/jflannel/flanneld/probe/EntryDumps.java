package org.jflannel.flanneld.probe;

import java.io.IOException;
import java.time.Duration;
import org.jflannel.linuxnet.netlink.RtNetlink;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The VXLAN device's neighbour and FDB entries for the staleness check: dumped at most once per
 * {@link #TTL}, so the peers classified within that window share one dump (a node cut off from
 * everyone classifies hundreds of peers in a few ticks). {@link KernelEntries#NONE} for udp (no
 * device to dump) or when a dump fails (logged). Probe thread only; the socket stays the caller's.
 */
final class EntryDumps {
    private static final Logger LOG = LoggerFactory.getLogger(Prober.class);
    static final Duration TTL = Duration.ofSeconds(2);

    private final RtNetlink nl;
    private final String device;
    private KernelEntries dump;
    private long dumpedAt;

    /** @param device the VXLAN device, or null (udp) */
    EntryDumps(RtNetlink nl, String device) {
        this.nl = nl;
        this.device = device;
    }

    KernelEntries at(long nowNanos) {
        if (device == null) {
            return KernelEntries.NONE;
        }
        if (dump == null || nowNanos - dumpedAt > TTL.toNanos()) {
            try {
                dump = KernelEntries.dump(nl, device);
            } catch (IOException e) {
                LOG.warn("peer probe entry dump failed device={} error={}", device, e.getMessage());
                dump = KernelEntries.NONE;
            }
            dumpedAt = nowNanos;
        }
        return dump;
    }
}
