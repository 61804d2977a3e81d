package org.jflannel.testsupport.kube;

import io.fabric8.mockwebserver.crud.AttributeSet;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The API server's recent history: every change to a stored object, in resourceVersion order, the
 * last {@code capacity} of them kept. A watch resumes from a resourceVersion by reading the changes
 * after it; once older changes have been dropped (compacted, as etcd and the watch cache do) a watch
 * from before them can no longer be served and is answered {@code 410 Gone}.
 */
final class WatchLog {

    /**
     * One change: its resourceVersion, the object's attributes before (null when created) and after
     * (null when deleted), and the object as watchers receive it (for a deletion: the last state,
     * carrying the deletion's resourceVersion).
     */
    record Change(long rv, AttributeSet before, AttributeSet after, String json) {
        Change {
            if (rv <= 0) {
                throw new IllegalArgumentException("rv: expected > 0, got " + rv);
            }
            if (before == null && after == null) {
                throw new IllegalArgumentException("before/after: a change needs at least one of them");
            }
            java.util.Objects.requireNonNull(json, "json");
        }
    }

    private final int capacity;
    private final ArrayDeque<Change> changes = new ArrayDeque<>();
    private final List<Runnable> listeners = new java.util.concurrent.CopyOnWriteArrayList<>();
    private long compactedThrough;
    private long lastRv;

    WatchLog(int capacity) {
        if (capacity < 1) {
            throw new IllegalArgumentException("capacity: expected >= 1, got " + capacity);
        }
        this.capacity = capacity;
    }

    /** Runs {@code listener} after every append and compaction (on the writer's thread; keep it short). */
    void onChange(Runnable listener) {
        listeners.add(listener);
    }

    void append(Change c) {
        synchronized (this) {
            if (c.rv() <= lastRv) {
                throw new IllegalStateException("change rv " + c.rv() + " not after " + lastRv);
            }
            changes.addLast(c);
            lastRv = c.rv();
            while (changes.size() > capacity) {
                compactedThrough = changes.removeFirst().rv();
            }
        }
        listeners.forEach(Runnable::run);
    }

    /** The changes after {@code rv}, oldest first; empty when some of them were already dropped (410 Gone). */
    synchronized Optional<List<Change>> after(long rv) {
        if (rv < compactedThrough) {
            return Optional.empty();
        }
        List<Change> out = new ArrayList<>();
        for (var it = changes.descendingIterator(); it.hasNext(); ) {
            Change c = it.next();
            if (c.rv() <= rv) {
                break;
            }
            out.add(c);
        }
        java.util.Collections.reverse(out);
        return Optional.of(out);
    }

    /** Drops the whole history: a watch from any resourceVersion before now is answered 410 Gone. */
    void compact() {
        synchronized (this) {
            changes.clear();
            compactedThrough = lastRv;
        }
        listeners.forEach(Runnable::run);
    }

    /** The oldest resourceVersion a watch can still resume from. */
    synchronized long compactedThrough() {
        return compactedThrough;
    }

    /** The resourceVersion of the latest change (0 before any). */
    synchronized long lastRv() {
        return lastRv;
    }
}
