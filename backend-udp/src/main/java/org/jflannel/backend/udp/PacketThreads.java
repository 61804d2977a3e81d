package org.jflannel.backend.udp;

import java.time.Duration;
import org.slf4j.Logger;

/** What the packet-path threads share when they stop: a bounded join, and one line if it was not enough. */
final class PacketThreads {
    static final Duration STOP_WAIT = Duration.ofSeconds(5);

    private PacketThreads() {
    }

    /**
     * Waits up to {@link #STOP_WAIT} for {@code thread} (already told to stop) to end; logs
     * {@code "<what> did not stop within 5 s <subject>"} at WARN when it did not.
     */
    static void awaitStop(Thread thread, Logger log, String what, String subject) {
        try {
            thread.join(STOP_WAIT.toMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        if (thread.isAlive()) {
            log.warn("{} did not stop within {} s {}", what, STOP_WAIT.toSeconds(), subject);
        }
    }
}
