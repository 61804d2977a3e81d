package org.jflannel.backend.wireguard.protocol;

import java.time.Duration;

/**
 * WireGuard's protocol constants (whitepaper §6.1, wireguard-go {@code device/constants.go}), as a
 * record so tests can shorten them: the interop test forces a rekey within seconds instead of two
 * minutes. {@link #standard()} is what a daemon runs.
 */
public record Timings(long rekeyAfterMessages, long rejectAfterMessages, Duration rekeyAfterTime,
        Duration rejectAfterTime, Duration rekeyAttemptTime, Duration rekeyTimeout, Duration keepaliveTimeout,
        Duration cookieRefreshTime) {

    public Timings {
        if (rekeyAfterTime.compareTo(rejectAfterTime) >= 0) {
            throw new IllegalArgumentException("timings: REKEY_AFTER_TIME " + rekeyAfterTime + " must be below REJECT_AFTER_TIME " + rejectAfterTime);
        }
        if (rekeyTimeout.isNegative() || rekeyTimeout.isZero() || keepaliveTimeout.isNegative() || keepaliveTimeout.isZero()) {
            throw new IllegalArgumentException("timings: REKEY_TIMEOUT and KEEPALIVE_TIMEOUT must be positive");
        }
    }

    /** 2^60 messages, 2^64 − 2^13 − 1 (unsigned), 120 s, 180 s, 90 s, 5 s, 10 s, 120 s. */
    public static Timings standard() {
        return new Timings(1L << 60, -(1L << 13) - 1, Duration.ofSeconds(120), Duration.ofSeconds(180),
                Duration.ofSeconds(90), Duration.ofSeconds(5), Duration.ofSeconds(10), Duration.ofSeconds(120));
    }

    /** The standard constants with REKEY_AFTER_TIME shortened (and REJECT_AFTER_TIME kept above it). */
    public Timings withRekeyAfterTime(Duration rekey) {
        Duration reject = rejectAfterTime.compareTo(rekey) > 0 ? rejectAfterTime : rekey.plus(rejectAfterTime);
        return new Timings(rekeyAfterMessages, rejectAfterMessages, rekey, reject, rekeyAttemptTime, rekeyTimeout,
                keepaliveTimeout, cookieRefreshTime);
    }

    public Timings withRekeyAfterMessages(long n) {
        return new Timings(n, rejectAfterMessages, rekeyAfterTime, rejectAfterTime, rekeyAttemptTime, rekeyTimeout,
                keepaliveTimeout, cookieRefreshTime);
    }

    /** Handshake attempts before giving up: REKEY_ATTEMPT_TIME / REKEY_TIMEOUT (18). */
    public int maxHandshakeAttempts() {
        return (int) Math.max(1, rekeyAttemptTime.toNanos() / rekeyTimeout.toNanos());
    }
}
