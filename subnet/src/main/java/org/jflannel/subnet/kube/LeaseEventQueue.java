package org.jflannel.subnet.kube;

import org.jflannel.core.LeaseEvent;
import org.jflannel.core.Subscription;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * The bounded queue between the informer callbacks and the subscriber (REFERENCE §4.7, Ours): at most
 * EVENT_QUEUE_DEPTH batches wait; a producer facing a full queue waits for space with a back-off of
 * 100 ms doubling to 5 s (a blocking offer, so it never spins) and never drops an event. One named
 * thread, {@code kube-lease-events}, hands batches to the sink: the first batch (the snapshot) alone,
 * later ones coalesced up to {@value #MAX_BATCH} events.
 */
final class LeaseEventQueue implements Subscription {

    private static final Logger LOG = LoggerFactory.getLogger(LeaseEventQueue.class);
    static final String THREAD_NAME = "kube-lease-events";
    private static final int MAX_BATCH = 500;
    private static final Duration FIRST_BACKOFF = Duration.ofMillis(100);
    private static final Duration MAX_BACKOFF = Duration.ofSeconds(5);

    private final BlockingQueue<List<LeaseEvent>> queue;
    private final Consumer<List<LeaseEvent>> sink;
    private final Thread thread;
    private volatile boolean closed;

    LeaseEventQueue(int depth, Consumer<List<LeaseEvent>> sink) {
        this.queue = new ArrayBlockingQueue<>(depth);
        this.sink = sink;
        this.thread = new Thread(this::deliver, THREAD_NAME);
        thread.setDaemon(true);
    }

    void start() {
        thread.start();
    }

    /**
     * Enqueues {@code batch}, waiting for space as long as needed. Returns false only when the queue
     * was closed meanwhile (the batch then has no reader).
     */
    boolean put(List<LeaseEvent> batch) throws InterruptedException {
        Duration backoff = FIRST_BACKOFF;
        while (!closed) {
            if (queue.offer(batch, backoff.toMillis(), TimeUnit.MILLISECONDS)) {
                return true;
            }
            LOG.warn("lease event queue full depth={} waitedMs={}", queue.size(), backoff.toMillis());
            backoff = backoff.multipliedBy(2).compareTo(MAX_BACKOFF) > 0 ? MAX_BACKOFF : backoff.multipliedBy(2);
        }
        return false;
    }

    private void deliver() {
        boolean first = true;
        try {
            while (!closed) {
                List<LeaseEvent> batch = new ArrayList<>(queue.take());
                if (!first) {
                    while (batch.size() < MAX_BATCH && queue.peek() != null
                            && batch.size() + queue.peek().size() <= MAX_BATCH) {
                        batch.addAll(queue.poll());
                    }
                }
                first = false;
                try {
                    sink.accept(List.copyOf(batch));
                } catch (RuntimeException e) {
                    LOG.error("lease event sink failed events={}", batch.size(), e);
                }
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // closing
        }
    }

    @Override
    public void close() {
        closed = true;
        thread.interrupt();
        if (Thread.currentThread() != thread) {
            try {
                thread.join(TimeUnit.SECONDS.toMillis(10));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
