package org.jflannel.backend.vxlan;

import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import org.jflannel.core.ConfigException;
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
 * @param routeNexthops      Ours: IPv4 peer routes through nexthop objects ({@code JFLANNEL_ROUTE_NEXTHOPS}); on by
 *                           default since session 9 (issue 23), where the kernel has them
 */
public record VxlanSettings(Sleeper sleeper, Duration reconcileInterval, Duration debounce,
                            Duration recreateMin, Duration recreateMax, boolean routeNexthops) {

    /** The variable that switches {@link #routeNexthops()}. */
    public static final String ROUTE_NEXTHOPS = "JFLANNEL_ROUTE_NEXTHOPS";

    public VxlanSettings(Sleeper sleeper, Duration reconcileInterval, Duration debounce, Duration recreateMin,
                         Duration recreateMax) {
        this(sleeper, reconcileInterval, debounce, recreateMin, recreateMax, true);
    }

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

    /** The same settings with routes through nexthop objects on or off. */
    public VxlanSettings withRouteNexthops(boolean on) {
        return new VxlanSettings(sleeper, reconcileInterval, debounce, recreateMin, recreateMax, on);
    }

    /**
     * {@code JFLANNEL_ROUTE_NEXTHOPS}: {@code 1}/{@code on}/{@code true} or {@code 0}/{@code off}/{@code false};
     * unset or empty is {@code dflt}.
     */
    public static boolean routeNexthops(Map<String, String> env, boolean dflt) throws ConfigException {
        String v = env.getOrDefault(ROUTE_NEXTHOPS, "").strip().toLowerCase(Locale.ROOT);
        return switch (v) {
            case "" -> dflt;
            case "1", "on", "true" -> true;
            case "0", "off", "false" -> false;
            default -> throw new ConfigException(ROUTE_NEXTHOPS, ROUTE_NEXTHOPS + ": expected on or off (1/0, true/false), got \""
                    + env.get(ROUTE_NEXTHOPS) + "\"");
        };
    }

    public static VxlanSettings defaults() {
        return new VxlanSettings(Sleeper.REAL, Duration.ofSeconds(10), Duration.ofMillis(200),
                Duration.ofSeconds(1), Duration.ofSeconds(30));
    }
}
