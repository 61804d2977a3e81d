package org.jflannel.subnet.kube;

import org.jflannel.core.Ip4Net;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseAttrs;
import org.jflannel.core.LeaseEvent;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;

class LeaseEventQueueTest {

    private static LeaseEvent event(int i) {
        return LeaseEvent.added(new Lease(Ip4Net.parse("10.244." + i + ".0/24"), null, new LeaseAttrs(null, null, "vxlan", null, null), null));
    }

    /** Collects batches; optionally blocks in the first call until released. */
    private static final class Sink implements java.util.function.Consumer<List<LeaseEvent>> {
        final List<List<LeaseEvent>> batches = new ArrayList<>();
        final List<String> threads = new ArrayList<>();
        final CountDownLatch release;

        Sink(boolean blockFirst) {
            release = new CountDownLatch(blockFirst ? 1 : 0);
        }

        @Override
        public void accept(List<LeaseEvent> batch) {
            try {
                release.await();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
            synchronized (this) {
                batches.add(batch);
                threads.add(Thread.currentThread().getName());
            }
        }

        synchronized List<LeaseEvent> events() {
            return batches.stream().flatMap(List::stream).toList();
        }
    }

    @Test
    void snapshotAloneFirstThenLaterEventsCoalescedInOrder() throws Exception {
        Sink sink = new Sink(false);
        LeaseEventQueue q = new LeaseEventQueue(10, sink);
        q.put(List.of(event(1)));
        q.put(List.of(event(2)));
        q.put(List.of(event(3)));
        q.put(List.of(event(4)));

        q.start();
        Waits.until(() -> sink.events().size() == 4 ? true : null, "4 events");
        q.close();

        assertThat(sink.batches).containsExactly(List.of(event(1)), List.of(event(2), event(3), event(4)));
        assertThat(sink.threads).containsOnly(LeaseEventQueue.THREAD_NAME);
    }

    @Test
    void fullQueueMakesTheProducerWaitAndLosesNothing() throws Exception {
        Sink sink = new Sink(true);
        LeaseEventQueue q = new LeaseEventQueue(1, sink);
        q.start();
        AtomicInteger done = new AtomicInteger();
        Thread producer = new Thread(() -> {
            try {
                for (int i = 0; i < 6; i++) {
                    q.put(List.of(event(i)));
                    done.incrementAndGet();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "test-producer");
        producer.start();

        // the sink holds batch 0, the queue holds batch 1: the producer waits (parked, not spinning) on batch 2
        Waits.until(() -> producer.getState() == Thread.State.TIMED_WAITING && done.get() == 2 ? true : null, "a parked producer");
        sink.release.countDown();
        producer.join(20_000);
        Waits.until(() -> sink.events().size() == 6 ? true : null, "all 6 events");
        q.close();

        assertThat(sink.events()).containsExactly(event(0), event(1), event(2), event(3), event(4), event(5));
    }

    @Test
    void closeReleasesAWaitingProducer() throws Exception {
        Sink sink = new Sink(true);
        LeaseEventQueue q = new LeaseEventQueue(1, sink);
        q.start();
        AtomicBoolean lastPut = new AtomicBoolean(true);
        Thread producer = new Thread(() -> {
            try {
                for (int i = 0; i < 3; i++) {
                    lastPut.set(q.put(List.of(event(i))));
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "test-producer");
        producer.start();
        Waits.until(() -> producer.getState() == Thread.State.TIMED_WAITING ? true : null, "a parked producer");

        q.close();
        producer.join(20_000);

        assertThat(producer.isAlive()).isFalse();
        assertThat(lastPut.get()).isFalse();
    }
}
