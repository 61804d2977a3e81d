package org.jflannel.flanneld.testing;

import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.locks.LockSupport;

/** A bounded wait on a condition, polled every 100 ms (Awaitility does not resolve here). */
public final class Await {
    private Await() {
    }

    /** True as soon as {@code condition} holds; false when {@code timeout} passed first. */
    public static boolean until(Callable<Boolean> condition, Duration timeout) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            if (condition.call()) {
                return true;
            }
            if (System.nanoTime() - deadline > 0) {
                return false;
            }
            LockSupport.parkNanos(Duration.ofMillis(100).toNanos());
        }
    }
}
