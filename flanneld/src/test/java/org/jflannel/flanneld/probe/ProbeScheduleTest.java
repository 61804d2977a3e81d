package org.jflannel.flanneld.probe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

/** The schedule's spread, jitter and bounds, on a fixed seed and made-up clocks (no time passes). */
class ProbeScheduleTest {
    private static final Duration INTERVAL = Duration.ofSeconds(10);
    private static final long I = INTERVAL.toNanos();

    private final ProbeSchedule schedule = new ProbeSchedule(INTERVAL, 0.1, new SplittableRandom(42));

    @Test
    void firstRoundsOfASnapshotFallWithinOneIntervalAndSpreadOverIt() {
        long now = 1_000_000_000L;
        int[] perSecond = new int[10];
        for (int i = 0; i < 2000; i++) {
            long at = schedule.firstDue(now);
            assertThat(at - now).isBetween(0L, I - 1);
            perSecond[(int) ((at - now) / 1_000_000_000L)]++;
        }
        // even would be 200 per second; no second gets more than 1.5x that (not all peers at once)
        for (int n : perSecond) {
            assertThat(n).isBetween(100, 300);
        }
    }

    @Test
    void nextRoundIsOneIntervalLaterWithinTheJitterAndNotAlwaysTheSame() {
        long due = 5L * I;
        long min = Long.MAX_VALUE;
        long max = Long.MIN_VALUE;
        for (int i = 0; i < 1000; i++) {
            long gap = schedule.nextDue(due) - due;
            assertThat(gap).isBetween((long) (0.9 * I), (long) (1.1 * I));
            min = Math.min(min, gap);
            max = Math.max(max, gap);
        }
        assertThat(max - min).as("jitter spreads the gaps").isGreaterThan(I / 10);
    }

    @Test
    void unreachablePeerWaitsTwoIntervalsWithinTheJitter() {
        long due = 5L * I;
        for (int i = 0; i < 1000; i++) {
            long gap = schedule.nextDue(due, true) - due;
            assertThat(gap).isBetween((long) (1.9 * I), (long) (2.1 * I));
        }
    }

    @Test
    void startsPerTickAreTwiceTheEvenShareAndAtLeastOne() {
        Duration tick = Duration.ofMillis(100);
        assertThat(ProbeSchedule.maxStartsPerTick(2000, tick, INTERVAL)).isEqualTo(40); // 20 even, x2
        assertThat(ProbeSchedule.maxStartsPerTick(3, tick, INTERVAL)).isEqualTo(1);
        assertThat(ProbeSchedule.maxStartsPerTick(0, tick, INTERVAL)).isEqualTo(1);
    }

    @Test
    void badIntervalOrJitterIsRefusedNamingIt() {
        assertThatThrownBy(() -> new ProbeSchedule(Duration.ZERO, 0.1, new SplittableRandom()))
                .hasMessageContaining("probe interval must be positive");
        assertThatThrownBy(() -> new ProbeSchedule(INTERVAL, 1.0, new SplittableRandom()))
                .hasMessageContaining("probe jitter must be in [0, 1)");
    }
}
