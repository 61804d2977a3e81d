package org.jflannel.backend.wireguard;

import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import org.slf4j.Logger;

/**
 * What a packet reader thread does when its work fails, instead of ending: the data plane must outlive a
 * packet that no check caught (a bug, which a hostile peer could otherwise trigger once to cut every pod
 * of the node off) and a transient error of its socket or TUN. The first fault is logged with its stack
 * (a bug report), later ones as one line per {@link #INTERVAL} with their count (a line per packet would
 * itself be a denial of service); a failed read also pauses the reader {@link #PAUSE}, so a broken file
 * descriptor does not spin. One per reader thread.
 */
final class ReaderFaults {
    static final Duration INTERVAL = Duration.ofSeconds(10);
    static final Duration PAUSE = Duration.ofMillis(100);

    private final Logger log;
    private final String reader;
    private long faults;
    private long unlogged;
    private long nextLog = Long.MIN_VALUE;

    ReaderFaults(Logger log, String reader) {
        this.log = log;
        this.reader = reader;
    }

    /** A packet made the reader's code throw: counted, logged at most once per interval, the reader goes on. */
    void threw(RuntimeException e) {
        if (faults++ == 0) {
            log.error("wireguard {} reader: a packet raised {}; the packet is dropped and the reader goes on (a bug: please report)", reader, e.toString(), e);
            nextLog = System.nanoTime() + INTERVAL.toNanos();
            return;
        }
        note(e.toString());
    }

    /** A read or write failed: logged as {@link #threw} is, then a pause. */
    void failed(Exception e) {
        if (faults++ == 0) {
            log.error("wireguard {} reader failed error={} (retrying)", reader, e.getMessage());
            nextLog = System.nanoTime() + INTERVAL.toNanos();
        } else {
            note(e.getMessage());
        }
        LockSupport.parkNanos(PAUSE.toNanos());
    }

    /** Faults so far. */
    long faults() {
        return faults;
    }

    private void note(String last) {
        unlogged++;
        long now = System.nanoTime();
        if (now - nextLog >= 0) {
            log.warn("wireguard {} reader: {} more faults in the last {} s, the last: {}", reader, unlogged, INTERVAL.toSeconds(), last);
            unlogged = 0;
            nextLog = now + INTERVAL.toNanos();
        }
    }
}
