package org.jflannel.backend.vxlan;

import java.time.Duration;
import java.util.Objects;
import org.jflannel.core.peers.HealTiming;

/**
 * Timing of the backend's retries and self-healing; {@link #defaults()} is what the daemon uses,
 * tests shorten it and inject a sleeper.
 *
 * @param sleeper            waits between per-step retries (REFERENCE §6.7)
 * @param reconcileInterval  periodic reconcile (REFERENCE §6.10: 10 s); zero turns it off
 * @param debounce           delay between a netlink change on our device and the reconcile it triggers
 * @param recreateMin        first back-off after a failed device re-creation (1 s)
 * @param recreateMax        back-off cap (30 s)
 */
public record VxlanSettings(Sleeper sleeper, Duration reconcileInterval, Duration debounce,
                            Duration recreateMin, Duration recreateMax) {

    public VxlanSettings {
        Objects.requireNonNull(sleeper, "sleeper");
        if (reconcileInterval.isNegative() || debounce.isNegative() || recreateMin.isNegative() || recreateMax.isNegative()) {
            throw new IllegalArgumentException("durations must not be negative");
        }
        if (recreateMin.compareTo(recreateMax) > 0) {
            throw new IllegalArgumentException("recreateMin " + recreateMin + " exceeds recreateMax " + recreateMax);
        }
    }

    /** The self-healing's part. */
    HealTiming timing() {
        return new HealTiming(reconcileInterval, debounce, recreateMin, recreateMax);
    }

    public static VxlanSettings defaults() {
        return new VxlanSettings(Sleeper.REAL, Duration.ofSeconds(10), Duration.ofMillis(200),
                Duration.ofSeconds(1), Duration.ofSeconds(30));
    }
}
