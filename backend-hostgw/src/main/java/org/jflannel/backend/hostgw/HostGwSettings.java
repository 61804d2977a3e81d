package org.jflannel.backend.hostgw;

import java.time.Duration;
import org.jflannel.core.peers.HealTiming;

/**
 * Timing of the self-healing; {@link #defaults()} is what the daemon uses, tests shorten it.
 *
 * @param reconcileInterval  periodic reconcile (upstream re-adds missing routes every 10 s); zero turns it off
 * @param debounce           delay between a netlink change on the external interface and the reconcile it triggers
 */
public record HostGwSettings(Duration reconcileInterval, Duration debounce) {

    public HostGwSettings {
        if (reconcileInterval.isNegative() || debounce.isNegative()) {
            throw new IllegalArgumentException("durations must not be negative");
        }
    }

    /** The self-healing's part (host-gw re-creates no device: no back-off). */
    HealTiming timing() {
        return new HealTiming(reconcileInterval, debounce, Duration.ZERO, Duration.ZERO);
    }

    public static HostGwSettings defaults() {
        return new HostGwSettings(Duration.ofSeconds(10), Duration.ofMillis(200));
    }
}
