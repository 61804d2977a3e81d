package org.jflannel.subnet.etcd;

import java.time.Duration;
import java.util.Objects;

/**
 * The delays of the etcd lease source (REFERENCE §5.3, §5.5), injectable so that tests need not wait
 * hours or minutes.
 *
 * @param leaseTtl     etcd lease granted with each lease key (upstream: 24 h)
 * @param renewMargin  renew this long before expiry ({@code --subnet-lease-renew-margin}, default 60 min)
 * @param renewRetry   retry a failed renewal after this (upstream: 1 min)
 * @param backoffMin   first reconnect delay of the watch (upstream: 100 ms), doubling ...
 * @param backoffMax   ... up to this (upstream: 5 s)
 * @param callTimeout  bound of every single etcd call
 * @param probeInterval while etcd is unreachable, probe it this often, ±50 % at random (ours, see {@link EtcdProbe})
 */
public record EtcdTimings(
        Duration leaseTtl,
        Duration renewMargin,
        Duration renewRetry,
        Duration backoffMin,
        Duration backoffMax,
        Duration callTimeout,
        Duration probeInterval) {

    public static final Duration LEASE_TTL = Duration.ofHours(24);
    /** Mean pause between two probes of an unreachable etcd: etcd's return is seen ≤ 0.75 s late. */
    public static final Duration PROBE_INTERVAL = Duration.ofMillis(500);

    public EtcdTimings {
        Objects.requireNonNull(leaseTtl, "leaseTtl");
        Objects.requireNonNull(renewMargin, "renewMargin");
        Objects.requireNonNull(renewRetry, "renewRetry");
        Objects.requireNonNull(backoffMin, "backoffMin");
        Objects.requireNonNull(backoffMax, "backoffMax");
        Objects.requireNonNull(callTimeout, "callTimeout");
        Objects.requireNonNull(probeInterval, "probeInterval");
        if (leaseTtl.toSeconds() < 1) {
            throw new IllegalArgumentException("leaseTtl must be at least 1 s, got " + leaseTtl);
        }
        if (renewMargin.isNegative() || renewMargin.isZero() || renewMargin.compareTo(leaseTtl) >= 0) {
            throw new IllegalArgumentException("Invalid subnet-lease-renew-margin option, out of acceptable range: "
                    + renewMargin.toMinutes() + " min (must be > 0 and < " + leaseTtl.toMinutes() + " min)");
        }
        if (renewRetry.isNegative() || backoffMin.isNegative() || backoffMax.compareTo(backoffMin) < 0
                || callTimeout.isNegative() || callTimeout.isZero() || probeInterval.isNegative() || probeInterval.isZero()) {
            throw new IllegalArgumentException("invalid etcd timings: " + renewRetry + " " + backoffMin + " "
                    + backoffMax + " " + callTimeout + " " + probeInterval);
        }
    }

    /** With the default {@link #PROBE_INTERVAL}. */
    public EtcdTimings(Duration leaseTtl, Duration renewMargin, Duration renewRetry, Duration backoffMin,
                       Duration backoffMax, Duration callTimeout) {
        this(leaseTtl, renewMargin, renewRetry, backoffMin, backoffMax, callTimeout, PROBE_INTERVAL);
    }

    /** Upstream's values with {@code --subnet-lease-renew-margin} in minutes. */
    public static EtcdTimings defaults(int renewMarginMinutes) {
        return new EtcdTimings(LEASE_TTL, Duration.ofMinutes(renewMarginMinutes), Duration.ofMinutes(1),
                Duration.ofMillis(100), Duration.ofSeconds(5), Duration.ofSeconds(10));
    }
}
