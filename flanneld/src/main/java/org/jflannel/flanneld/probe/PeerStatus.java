package org.jflannel.flanneld.probe;

import java.time.Instant;
import java.util.Objects;

/**
 * What the prober last concluded about one peer (immutable; /peers reads it from another thread).
 *
 * @param cause       null unless {@link State#UNREACHABLE}
 * @param since       when the peer entered this state (and cause)
 * @param lastProbe   when the last round ended; null before the first
 * @param small       last small overlay probe, null before the first round
 * @param fullSize    last full-size overlay probe
 * @param underlay    last plain probe to the public IP, null when not needed
 * @param detail      why the cause was chosen ("neighbour ... has ..., lease says ..."), or ""
 */
record PeerStatus(PeerTarget target, State state, Cause cause, Instant since, Instant lastProbe, Outcome small,
                  Outcome fullSize, Outcome underlay, String detail) {

    /** Reachability as /peers and the metric show it. */
    enum State { UNKNOWN, REACHABLE, UNREACHABLE }

    PeerStatus {
        Objects.requireNonNull(target, "target");
        Objects.requireNonNull(state, "state");
        detail = detail == null ? "" : detail;
    }

    static PeerStatus unknown(PeerTarget target, Instant now) {
        return new PeerStatus(target, State.UNKNOWN, null, now, null, null, null, null, "");
    }

    /** Same state and cause: not a change worth a log line. */
    boolean sameVerdict(PeerStatus other) {
        return state == other.state && cause == other.cause;
    }

    String verdict() {
        return state == State.UNREACHABLE ? cause.label() : state.name().toLowerCase(java.util.Locale.ROOT);
    }
}
