package org.jflannel.testsupport.cluster;

/**
 * A harness's teardown: every step runs even when an earlier one failed (a namespace left behind
 * because a process would not die is worse than one error), and the first failure is thrown at the
 * end with the later ones suppressed. Shared by {@link NetnsCluster} and {@link DaemonSetCluster}.
 */
final class Cleanup {
    /** One teardown step. */
    interface Step {
        void run() throws Exception;
    }

    private Exception failure;

    Cleanup attempt(Step step) {
        try {
            step.run();
        } catch (Exception e) {
            if (failure == null) {
                failure = e;
            } else {
                failure.addSuppressed(e);
            }
        }
        return this;
    }

    void throwIfFailed() throws Exception {
        if (failure != null) {
            throw failure;
        }
    }

    /** Removes a run's shutdown hook, unless the JVM is already running it (then the hook is the caller). */
    static void removeShutdownHook(Thread hook) {
        try {
            Runtime.getRuntime().removeShutdownHook(hook);
        } catch (IllegalStateException shuttingDown) {
            // inside the hook itself
        }
    }
}
