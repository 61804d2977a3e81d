package org.jflannel.testsupport.cluster;

import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * A bounded wait on a condition: polls every {@code interval} until the condition holds or the
 * deadline passes, then fails with a message that says what was awaited and what was last seen.
 * Used instead of sleeps everywhere in the harness and the end-to-end tests.
 */
public final class Wait {
    private static final Duration INTERVAL = Duration.ofMillis(100);

    private Wait() {
    }

    /** Waits until {@code condition} returns true; exceptions thrown by it (but {@link Abort}) count as "not yet". */
    public static void until(String what, Duration within, Callable<Boolean> condition)
            throws InterruptedException, TimeoutException {
        until(what, within, condition, Boolean.TRUE::equals);
    }

    /**
     * Polls {@code probe} until {@code done} accepts its value and returns that value; exceptions
     * thrown by the probe count as "not yet" and are reported when the time is up, except
     * {@link Abort}, which ends the wait at once.
     */
    public static <T> T until(String what, Duration within, Callable<T> probe, Predicate<? super T> done)
            throws InterruptedException, TimeoutException {
        long deadline = System.nanoTime() + within.toNanos();
        Object last = "(nothing yet)";
        while (true) {
            try {
                T value = probe.call();
                if (done.test(value)) {
                    return value;
                }
                last = value;
            } catch (InterruptedException | Abort e) {
                throw e;
            } catch (Exception e) {
                last = e.toString();
            }
            if (System.nanoTime() - deadline >= 0) {
                throw new TimeoutException("timed out after " + within.toMillis() + " ms waiting for "
                        + what + "; last seen: " + last);
            }
            TimeUnit.MILLISECONDS.sleep(INTERVAL.toMillis());
        }
    }

    /** Thrown by a probe when waiting longer is pointless (the awaited process died): ends the wait at once. */
    public static final class Abort extends RuntimeException {
        private static final long serialVersionUID = 1L;

        public Abort(String message) {
            super(message);
        }
    }

    /** A bounded wait that ran out. */
    public static final class TimeoutException extends Exception {
        private static final long serialVersionUID = 1L;

        public TimeoutException(String message) {
            super(message);
        }
    }
}
