package org.jflannel.backend.vxlan;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.ThreadLocalRandom;
import org.jflannel.linuxnet.NetlinkException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Upstream's per-step retry (REFERENCE §6.7): up to {@code attempts} tries, {@code base} back-off
 * doubling after each failure, plus up to {@code maxJitter} of random jitter. Ours: a step whose
 * device is gone (ENODEV) is not retried, since re-creating the device replays every entry anyway.
 */
final class Retry {
    private static final Logger LOG = LoggerFactory.getLogger(Retry.class);
    static final int ENODEV = 19;

    @FunctionalInterface
    interface KernelCall {
        void run() throws IOException;
    }

    private final int attempts;
    private final Duration base;
    private final Duration maxJitter;
    private final Sleeper sleeper;

    Retry(int attempts, Duration base, Duration maxJitter, Sleeper sleeper) {
        if (attempts < 1) {
            throw new IllegalArgumentException("attempts must be >= 1, got " + attempts);
        }
        this.attempts = attempts;
        this.base = base;
        this.maxJitter = maxJitter;
        this.sleeper = sleeper;
    }

    /** Upstream's numbers: 10 tries, 100 ms doubling, up to 100 ms jitter. */
    static Retry upstream(Sleeper sleeper) {
        return new Retry(10, Duration.ofMillis(100), Duration.ofMillis(100), sleeper);
    }

    /** A single attempt (upstream's un-retried clean-ups). */
    static Retry once() {
        return new Retry(1, Duration.ZERO, Duration.ZERO, d -> { });
    }

    void run(String what, KernelCall call) throws IOException, InterruptedException {
        Duration delay = base;
        for (int attempt = 1; ; attempt++) {
            try {
                call.run();
                return;
            } catch (IOException e) {
                if (attempt >= attempts || isDeviceGone(e)) {
                    throw e;
                }
                LOG.debug("{} failed attempt={} retryIn={}ms error={}", what, attempt, delay.toMillis(), e.getMessage());
                sleeper.sleep(delay.plus(jitter()));
                delay = delay.multipliedBy(2);
            }
        }
    }

    private Duration jitter() {
        long max = maxJitter.toMillis();
        return max <= 0 ? Duration.ZERO : Duration.ofMillis(ThreadLocalRandom.current().nextLong(max + 1));
    }

    static boolean isDeviceGone(IOException e) {
        return e instanceof NetlinkException ne && ne.errno() == ENODEV;
    }
}
