package org.jflannel.backend.wireguard;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The protocol's clock on the packet threads: the time their batch began, read once; other threads read the real clock. */
class BatchClockTest {
    @Test
    void aPacketThreadSeesItsBatchTimeUntilItsNextBatchOthersTheRealClock() throws Exception {
        Dataplane.BatchClock clock = new Dataplane.BatchClock();
        clock.tunBatch(); // this thread is the TUN thread from now on
        long batch = clock.getAsLong();
        Thread.sleep(5);
        assertThat(clock.getAsLong()).as("within one batch: the batch's time").isEqualTo(batch);

        AtomicLong sock = new AtomicLong();
        AtomicLong sockLater = new AtomicLong();
        AtomicLong other = new AtomicLong();
        Thread s = new Thread(() -> {
            long t = clock.sockBatch();
            sock.set(clock.getAsLong() == t ? t : -1);
            sockLater.set(clock.getAsLong());
        });
        s.start();
        s.join();
        assertThat(sock.get()).as("the socket thread's own batch time").isGreaterThan(batch);
        assertThat(sockLater.get()).isEqualTo(sock.get());

        Thread o = new Thread(() -> other.set(clock.getAsLong()));
        long before = System.nanoTime();
        o.start();
        o.join();
        assertThat(other.get()).as("any other thread: the real clock").isGreaterThanOrEqualTo(before);
        assertThat(clock.getAsLong()).as("the TUN thread still on its batch").isEqualTo(batch);

        clock.tunBatch();
        assertThat(clock.getAsLong()).as("a new batch").isGreaterThanOrEqualTo(before);
    }
}
