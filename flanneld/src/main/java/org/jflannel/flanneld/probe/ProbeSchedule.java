package org.jflannel.flanneld.probe;

import java.time.Duration;
import java.util.random.RandomGenerator;

/**
 * Pure: when each peer is probed. A new peer's first round falls uniformly in one interval from now,
 * so a snapshot of 2,000 leases is spread over the interval instead of probed at once; each next
 * round is one interval later, jittered by ±{@code jitter} of it, so peers never fall into step. On top,
 * at most {@link #maxStartsPerTick} rounds start per tick: a burst (many peers due together after a
 * stall) is smeared out rather than sent at once.
 */
final class ProbeSchedule {
    private final long intervalNanos;
    private final double jitter;
    private final RandomGenerator random;

    /** @param jitter fraction of the interval, 0 ≤ jitter < 1 */
    ProbeSchedule(Duration interval, double jitter, RandomGenerator random) {
        if (interval.isNegative() || interval.isZero()) {
            throw new IllegalArgumentException("probe interval must be positive, got " + interval);
        }
        if (jitter < 0 || jitter >= 1) {
            throw new IllegalArgumentException("probe jitter must be in [0, 1), got " + jitter);
        }
        this.intervalNanos = interval.toNanos();
        this.jitter = jitter;
        this.random = random;
    }

    /** A new peer's first round: uniformly within [now, now + interval). */
    long firstDue(long nowNanos) {
        return nowNanos + (long) (random.nextDouble() * intervalNanos);
    }

    /** The round after one that was due at {@code dueNanos}: one interval later ± jitter. */
    long nextDue(long dueNanos) {
        return nextDue(dueNanos, false);
    }

    /**
     * As {@link #nextDue(long)}; a peer that is {@code unreachable} waits two intervals: a failing
     * round sends up to four probes, so a node cut off from all its peers costs no more than a healthy
     * one, and a recovery still shows within about two intervals.
     */
    long nextDue(long dueNanos, boolean unreachable) {
        double factor = (unreachable ? 2 : 1) + jitter * (2 * random.nextDouble() - 1);
        return dueNanos + (long) (intervalNanos * factor);
    }

    long intervalNanos() {
        return intervalNanos;
    }

    /**
     * Rounds that may start in one tick: twice the even share ({@code peers × tick / interval}), at
     * least 1, so a steady state never waits and a burst takes at most half an interval to clear.
     */
    static int maxStartsPerTick(int peers, Duration tick, Duration interval) {
        double share = (double) peers * tick.toNanos() / interval.toNanos();
        return Math.max(1, (int) Math.ceil(2 * share));
    }
}
