package org.jflannel.backend.wireguard;

import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;
import java.util.function.IntConsumer;

/**
 * Crypto on more than one core: {@link #run} does {@code job(0) … job(n − 1)} on the calling thread
 * and this pool's threads together (each takes {@value #CHUNK} indices at a time) and returns when
 * all are done. The caller keeps the order of everything around the jobs (counters reserved before,
 * datagrams sent or packets delivered after, in order), so only the independent part, sealing or
 * opening one datagram, runs in parallel. A pool of zero threads runs everything on the caller. One
 * caller at a time (each packet thread has its own pool).
 */
final class Workers implements AutoCloseable {
    static final int CHUNK = 4;
    /** Fewer jobs than this run on the caller alone: the hand-off would cost more than it saves. */
    static final int MIN_PARALLEL = 8;

    private final Thread[] threads;
    /** The jobs of one {@link #run}: workers late for one batch only ever touch its own counters. */
    private record Batch(IntConsumer job, int count, Thread caller, AtomicInteger next, AtomicInteger done) {
    }

    private volatile Batch current;
    private volatile boolean closed;

    Workers(int threads, String name) {
        this.threads = new Thread[threads];
        for (int i = 0; i < threads; i++) {
            Thread t = new Thread(this::loop, name + "-" + i);
            t.setDaemon(true);
            this.threads[i] = t;
            t.start();
        }
    }

    int threads() {
        return threads.length;
    }

    void run(int n, IntConsumer job) {
        if (threads.length == 0 || n < MIN_PARALLEL) {
            for (int i = 0; i < n; i++) {
                job.accept(i);
            }
            return;
        }
        Batch b = new Batch(job, n, Thread.currentThread(), new AtomicInteger(), new AtomicInteger());
        current = b;
        for (Thread t : threads) {
            LockSupport.unpark(t);
        }
        work(b);
        while (b.done.get() < n) {
            LockSupport.parkNanos(this, 50_000); // the worker that finishes the last chunk unparks us
        }
        current = null;
    }

    private static void work(Batch b) {
        int i;
        while ((i = b.next.getAndAdd(CHUNK)) < b.count) {
            int end = Math.min(b.count, i + CHUNK);
            for (int k = i; k < end; k++) {
                b.job.accept(k);
            }
            if (b.done.addAndGet(end - i) >= b.count) {
                LockSupport.unpark(b.caller);
            }
        }
    }

    private void loop() {
        Batch seen = null;
        while (!closed) {
            Batch b = current;
            if (b == null || b == seen) {
                LockSupport.park(this);
                continue;
            }
            seen = b;
            work(b);
        }
    }

    @Override
    public void close() {
        closed = true;
        for (Thread t : threads) {
            LockSupport.unpark(t);
        }
    }
}
