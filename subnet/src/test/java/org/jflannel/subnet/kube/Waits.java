package org.jflannel.subnet.kube;

import java.util.function.Supplier;

/** A bounded wait on a condition for tests: polls with a short back-off, fails after 20 s. */
final class Waits {

    private Waits() {
    }

    static <T> T until(Supplier<T> value, String what) throws InterruptedException {
        long deadline = System.nanoTime() + 20_000_000_000L;
        long pause = 5;
        while (true) {
            T v = value.get();
            if (v != null) {
                return v;
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no " + what + " within 20 s");
            }
            java.util.concurrent.locks.LockSupport.parkNanos(pause * 1_000_000L); // back-off between polls
            if (Thread.interrupted()) {
                throw new InterruptedException("waiting for " + what);
            }
            pause = Math.min(pause * 2, 200);
        }
    }
}
