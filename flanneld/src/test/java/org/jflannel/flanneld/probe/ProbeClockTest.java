package org.jflannel.flanneld.probe;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** Round-trip times from the kernel's receive stamp, on made-up clocks. */
class ProbeClockTest {
    private static final long WALL_MINUS_MONO = 1_764_000_000_000_000_000L - 5_000_000_000L; // wall 1764000000 s at mono 5 s

    @Test
    void rttIsTheStampMovedOntoTheMonotonicScaleMinusTheSendTime() {
        long sent = 5_000_000_000L;
        long stamp = 1_764_000_000_000_000_000L + 250_000L; // arrived 250 µs after mono 5 s
        long readLate = 5_090_000_000L;                      // read 90 ms later, at the next tick
        assertThat(ProbeClock.rttNanos(sent, stamp, WALL_MINUS_MONO, readLate)).isEqualTo(250_000L);
    }

    @Test
    void withoutAStampTheReadTimeIsAllThereIs() {
        assertThat(ProbeClock.rttNanos(5_000_000_000L, 0, WALL_MINUS_MONO, 5_001_000_000L)).isEqualTo(1_000_000L);
    }

    @Test
    void aClockStepCannotMakeItNegativeOrLongerThanTheWait() {
        long sent = 5_000_000_000L;
        long now = 5_010_000_000L;
        long before = 1_764_000_000_000_000_000L - 3_000_000_000L; // wall clock stepped back 3 s
        assertThat(ProbeClock.rttNanos(sent, before, WALL_MINUS_MONO, now)).isZero();
        long after = 1_764_000_000_000_000_000L + 60_000_000_000L;  // stepped forward a minute
        assertThat(ProbeClock.rttNanos(sent, after, WALL_MINUS_MONO, now)).isEqualTo(10_000_000L);
    }
}
