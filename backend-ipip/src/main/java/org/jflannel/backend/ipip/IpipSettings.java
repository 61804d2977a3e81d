package org.jflannel.backend.ipip;

import java.time.Duration;
import org.jflannel.core.peers.HealTiming;

/**
 * Timing of the self-healing; {@link #defaults()} is what the daemon uses, tests shorten it.
 *
 * @param reconcileInterval  periodic reconcile (upstream's route check re-adds missing routes every 10 s); zero: off
 * @param debounce           delay between a netlink change that matters and the reconcile it triggers
 * @param recreateMin        first back-off after a failed re-creation of {@code flannel.ipip}
 * @param recreateMax        back-off cap
 */
public record IpipSettings(Duration reconcileInterval, Duration debounce, Duration recreateMin, Duration recreateMax) {

    public IpipSettings {
        timing(reconcileInterval, debounce, recreateMin, recreateMax); // checks them
    }

    HealTiming timing() {
        return timing(reconcileInterval, debounce, recreateMin, recreateMax);
    }

    private static HealTiming timing(Duration interval, Duration debounce, Duration min, Duration max) {
        return new HealTiming(interval, debounce, min, max);
    }

    public static IpipSettings defaults() {
        return new IpipSettings(Duration.ofSeconds(10), Duration.ofMillis(200), Duration.ofSeconds(1), Duration.ofSeconds(30));
    }
}
