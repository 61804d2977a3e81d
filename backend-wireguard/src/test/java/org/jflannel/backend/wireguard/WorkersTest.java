package org.jflannel.backend.wireguard;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class WorkersTest {

    /** Every index of every batch exactly once, whatever the batch size and pool; results visible to the caller after run. */
    @ParameterizedTest(name = "{0} worker threads")
    @ValueSource(ints = {0, 1, 3})
    void eachIndexOnceAndVisibleAfterRun(int threads) {
        try (Workers w = new Workers(threads, "test-workers")) {
            for (int n : new int[] {0, 1, Workers.MIN_PARALLEL - 1, Workers.MIN_PARALLEL, 45, 128, 1000}) {
                for (int round = 0; round < 50; round++) {
                    AtomicIntegerArray hits = new AtomicIntegerArray(Math.max(1, n));
                    int[] plain = new int[Math.max(1, n)]; // written by workers without synchronisation
                    w.run(n, i -> {
                        hits.incrementAndGet(i);
                        plain[i] = i + 1;
                    });
                    for (int i = 0; i < n; i++) {
                        assertThat(hits.get(i)).as("index %d of %d, round %d", i, n, round).isEqualTo(1);
                        assertThat(plain[i]).as("plain write of index %d", i).isEqualTo(i + 1);
                    }
                }
            }
        }
    }

    /** The caller's first job waits (bounded) for a job on another thread: returns true when one came. */
    @org.junit.jupiter.api.Test
    void aBatchAboveTheThresholdRunsOnTheWorkersToo() throws Exception {
        try (Workers w = new Workers(1, "test-workers")) {
            Thread caller = Thread.currentThread();
            java.util.concurrent.CountDownLatch other = new java.util.concurrent.CountDownLatch(1);
            boolean[] joined = new boolean[1];
            // the caller's first job, whichever index it is: a worker unparked first may take chunk 0
            java.util.concurrent.atomic.AtomicBoolean first = new java.util.concurrent.atomic.AtomicBoolean(true);
            w.run(64, i -> {
                if (Thread.currentThread() != caller) {
                    other.countDown();
                } else if (first.getAndSet(false)) {
                    try {
                        joined[0] = other.await(30, java.util.concurrent.TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    }
                }
            });
            if (first.get()) {
                // the worker took every chunk before the caller took one: it still ran on the workers
                assertThat(other.getCount()).as("a worker thread ran the batch").isZero();
            } else {
                assertThat(joined[0]).as("a worker thread ran a job while the caller waited in its first").isTrue();
            }
        }
    }

    @org.junit.jupiter.api.Test
    void withoutWorkersEverythingRunsOnTheCaller() {
        try (Workers w = new Workers(0, "test-workers")) {
            java.util.Set<Thread> threads = java.util.concurrent.ConcurrentHashMap.newKeySet();
            w.run(512, i -> threads.add(Thread.currentThread()));
            assertThat(threads).containsExactly(Thread.currentThread());
        }
    }
}
