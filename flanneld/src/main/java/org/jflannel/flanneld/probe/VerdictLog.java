package org.jflannel.flanneld.probe;

import java.util.Locale;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The prober's log: one line per state change of a peer, never per probe; the first "reachable" of
 * each peer only at DEBUG (thousands of them at start-up). Logged under {@link Prober}'s name.
 */
final class VerdictLog {
    private static final Logger LOG = LoggerFactory.getLogger(Prober.class);

    private VerdictLog() {
    }

    static void change(PeerStatus before, PeerStatus after) {
        PeerTarget t = after.target();
        if (after.state() == PeerStatus.State.UNREACHABLE) {
            LOG.warn("peer unreachable peer={} subnet={} cause={} was={} {}", t.peer(), t.subnet(), after.cause().label(),
                    before.verdict(), after.detail());
        } else if (before.state() == PeerStatus.State.UNKNOWN) {
            LOG.debug("peer reachable peer={} subnet={} rttMs={}", t.peer(), t.subnet(), rttMs(after));
        } else {
            LOG.info("peer reachable peer={} subnet={} was={} rttMs={}", t.peer(), t.subnet(), before.verdict(), rttMs(after));
        }
    }

    /** What a failed round saw, for the status's detail and the log line. */
    static String failureDetail(Round r) {
        return "small=" + r.small().describe() + " fullSize=" + r.fullSize().describe()
                + (r.underlay() == null ? "" : " underlay=" + r.underlay().describe());
    }

    private static String rttMs(PeerStatus s) {
        return String.format(Locale.ROOT, "%.3f", s.small().rttSeconds() * 1000);
    }
}
