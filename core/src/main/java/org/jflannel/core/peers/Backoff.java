package org.jflannel.core.peers;

import java.time.Duration;

/** Doubling back-off between {@code min} and {@code max} (device re-creation: 1 s → 30 s). */
public record Backoff(Duration min, Duration max) {

    public Backoff {
        if (min.isNegative() || min.compareTo(max) > 0) {
            throw new IllegalArgumentException("back-off needs 0 <= min <= max, got " + min + ", " + max);
        }
    }

    public Duration next(Duration current) {
        Duration doubled = current.multipliedBy(2);
        return doubled.compareTo(max) > 0 ? max : doubled.compareTo(min) < 0 ? min : doubled;
    }
}
