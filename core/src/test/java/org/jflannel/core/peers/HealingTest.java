package org.jflannel.core.peers;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class HealingTest {
    private static final HealTiming TIMING = new HealTiming(Duration.ofSeconds(10), Duration.ofMillis(200),
            Duration.ofSeconds(1), Duration.ofSeconds(30));

    /** The passes asked for, in order: true = full. */
    private final List<Boolean> passes = new ArrayList<>();
    private boolean closed;
    private final Healing.Target target = new Healing.Target() {
        @Override
        public void reconcile(boolean full) {
            passes.add(full);
        }

        @Override
        public boolean closed() {
            return closed;
        }
    };
    private final FakeTimer timer = new FakeTimer();
    private final Healing healing = new Healing("fake", target, Runnable::run, TIMING, timer);

    @Test
    void manyChangesMakeOneDebouncedPass() {
        healing.reconcileSoon(false);
        healing.reconcileSoon(false);
        healing.reconcileSoon(false);

        assertThat(timer.delays()).containsExactly(Duration.ofMillis(200));
        timer.runDue();
        assertThat(passes).containsExactly(false);

        healing.reconcileSoon(false); // after the pass ran, the next change schedules another
        assertThat(timer.delays()).containsExactly(Duration.ofMillis(200));
    }

    @Test
    void aLinkChangeMakesThePendingPassAFullOne() {
        healing.reconcileSoon(false);
        healing.reconcileSoon(true);

        timer.runDue();
        healing.reconcileSoon(false);
        timer.runDue();

        assertThat(passes).containsExactly(true, false);
    }

    @Test
    void aDeletedDeviceGetsAFullPassAtOnce() {
        healing.deviceGone();
        healing.deviceGone();

        assertThat(timer.delays()).containsExactly(Duration.ZERO);
        timer.runDue();
        assertThat(passes).containsExactly(true);
    }

    @Test
    void failedRecreationsBackOffFromOneSecondToThirtyAndStartOverAfterASuccess() {
        List<Long> seconds = new ArrayList<>();
        for (int i = 0; i < 7; i++) {
            healing.retryDeviceLater();
            seconds.add(timer.delays().get(0).toSeconds());
            timer.runDue();
        }
        assertThat(seconds).containsExactly(1L, 2L, 4L, 8L, 16L, 30L, 30L);
        assertThat(passes).containsOnly(true).hasSize(7);

        healing.resetBackoff();
        healing.retryDeviceLater();
        assertThat(timer.delays()).containsExactly(Duration.ofSeconds(1));
    }

    @Test
    void theTimerRunsAFullPassEveryInterval() {
        healing.start(() -> { });

        assertThat(timer.periodic).containsExactly(Duration.ofSeconds(10));
        timer.runPeriodic();
        assertThat(passes).containsExactly(true);
    }

    @Test
    void aZeroIntervalMeansNoPeriodicPass() {
        new Healing("fake", target, Runnable::run, new HealTiming(Duration.ZERO, Duration.ZERO, Duration.ZERO, Duration.ZERO), timer)
                .start(() -> { });

        assertThat(timer.periodic).isEmpty();
    }

    @Test
    void closingStopsTheTimerAndTheEventSource() {
        boolean[] sourceClosed = {false};
        healing.start(() -> sourceClosed[0] = true);

        healing.close();

        assertThat(timer.closed).isTrue();
        assertThat(sourceClosed[0]).isTrue();
    }

    @Test
    void nothingIsHandedOnOnceTheLoopIsClosed() {
        healing.reconcileSoon(true);
        closed = true;

        timer.runDue();

        assertThat(passes).isEmpty();
    }

    /** Keeps the tasks; the test runs them when it says. */
    static final class FakeTimer implements Healing.Timer {
        private final List<Runnable> due = new ArrayList<>();
        private final List<Duration> dueDelays = new ArrayList<>();
        private final List<Runnable> periodicTasks = new ArrayList<>();
        final List<Duration> periodic = new ArrayList<>();

        @Override
        public void schedule(Runnable task, Duration delay) {
            due.add(task);
            dueDelays.add(delay);
        }

        @Override
        public void every(Runnable task, Duration interval) {
            periodicTasks.add(task);
            periodic.add(interval);
        }

        List<Duration> delays() {
            return List.copyOf(dueDelays);
        }

        void runDue() {
            List<Runnable> now = List.copyOf(due);
            due.clear();
            dueDelays.clear();
            now.forEach(Runnable::run);
        }

        void runPeriodic() {
            periodicTasks.forEach(Runnable::run);
        }

        boolean closed;

        @Override
        public void close() {
            closed = true;
        }
    }
}
