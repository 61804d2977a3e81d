package org.jflannel.backend.udp;

import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.locks.LockSupport;

/** A bounded wait on a condition (no bare sleeps in tests): polls until true or fails at the deadline. */
final class Wait {
    private Wait() {
    }

    static void until(String what, Duration limit, Callable<Boolean> condition) throws Exception {
        long deadline = System.nanoTime() + limit.toNanos();
        for (int i = 0; i < 10_000; i++) {
            if (Boolean.TRUE.equals(condition.call())) {
                return;
            }
            if (System.nanoTime() > deadline) {
                break;
            }
            LockSupport.parkNanos(Duration.ofMillis(50).toNanos());
            if (Thread.interrupted()) {
                throw new InterruptedException("waiting for " + what);
            }
        }
        throw new AssertionError("timed out after " + limit + " waiting for " + what);
    }
}
