package org.jflannel.cni;

import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Runs fuzz inputs on one thread with the plugin's stack (the launcher starts the JVM with -Xss512k),
 * so recursion that the plugin cannot afford fails here as a {@link StackOverflowError}; and bounds
 * the time per input (a hang fails the input instead of stalling the campaign).
 */
final class SmallStack {
    static final long STACK_BYTES = 512 * 1024;
    private static final ExecutorService THREAD = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(null, r, "fuzz-512k", STACK_BYTES);
        t.setDaemon(true);
        return t;
    });

    private SmallStack() {
    }

    static <T> T call(Callable<T> task) throws Exception {
        Future<T> f = THREAD.submit(task);
        try {
            return f.get(10, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof Error err) {
                throw err;
            }
            throw (Exception) e.getCause();
        } catch (TimeoutException e) {
            f.cancel(true);
            throw new AssertionError("one input took more than 10 s");
        }
    }
}
