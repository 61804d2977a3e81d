package org.jflannel.core.peers;

import java.time.Duration;

/**
 * When {@link Healing} runs its passes.
 *
 * @param reconcileInterval  the periodic full pass (REFERENCE §6.10: 10 s); zero turns it off
 * @param debounce           delay between a netlink change that matters and the pass it triggers
 * @param recreateMin        first back-off after a failed device re-creation (1 s)
 * @param recreateMax        back-off cap (30 s)
 */
public record HealTiming(Duration reconcileInterval, Duration debounce, Duration recreateMin, Duration recreateMax) {

    public HealTiming {
        if (reconcileInterval.isNegative() || debounce.isNegative() || recreateMin.isNegative() || recreateMax.isNegative()) {
            throw new IllegalArgumentException("durations must not be negative");
        }
        if (recreateMin.compareTo(recreateMax) > 0) {
            throw new IllegalArgumentException("recreateMin " + recreateMin + " exceeds recreateMax " + recreateMax);
        }
    }
}
