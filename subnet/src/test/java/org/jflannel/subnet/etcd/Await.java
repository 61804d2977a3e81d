package org.jflannel.subnet.etcd;

import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

/** A bounded wait on a condition, polled; fails with {@code what} when the bound passes. */
final class Await {
    private Await() {
    }

    static void until(Callable<Boolean> condition, Duration bound, String what) throws Exception {
        long deadline = System.nanoTime() + bound.toNanos();
        while (!Boolean.TRUE.equals(condition.call())) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not within " + bound + ": " + what);
            }
            TimeUnit.MILLISECONDS.sleep(20);
        }
    }
}
