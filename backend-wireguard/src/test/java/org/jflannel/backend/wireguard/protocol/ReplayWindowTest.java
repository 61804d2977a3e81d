package org.jflannel.backend.wireguard.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** RFC 6479 window: the cases of wireguard-go's replay_test.go, in spirit. */
class ReplayWindowTest {
    private static final long LIMIT = Timings.standard().rejectAfterMessages();

    @Test
    void acceptsEachCounterOnce() {
        ReplayWindow w = new ReplayWindow();
        assertThat(w.accept(0, LIMIT)).isTrue();
        assertThat(w.accept(0, LIMIT)).isFalse();
        assertThat(w.accept(1, LIMIT)).isTrue();
        assertThat(w.accept(3, LIMIT)).isTrue();
        assertThat(w.accept(2, LIMIT)).isTrue(); // out of order, inside the window
        assertThat(w.accept(2, LIMIT)).isFalse();
        assertThat(w.accept(3, LIMIT)).isFalse();
    }

    @Test
    void windowIsAtLeast2048AndForgetsWhatFallsBehind() {
        ReplayWindow w = new ReplayWindow();
        assertThat(ReplayWindow.WINDOW).isGreaterThanOrEqualTo(2048);
        long top = 10_000;
        assertThat(w.accept(top, LIMIT)).isTrue();
        assertThat(w.accept(top - ReplayWindow.WINDOW, LIMIT)).isTrue();   // the oldest still inside
        assertThat(w.accept(top - ReplayWindow.WINDOW - 1, LIMIT)).isFalse(); // too old
        assertThat(w.accept(top - 2048, LIMIT)).isTrue();
        assertThat(w.accept(top - 2048, LIMIT)).isFalse();
    }

    @Test
    void aJumpFarAheadClearsTheRing() {
        ReplayWindow w = new ReplayWindow();
        for (long i = 0; i < 300; i++) {
            assertThat(w.accept(i, LIMIT)).isTrue();
        }
        long far = 1_000_000;
        assertThat(w.accept(far, LIMIT)).isTrue();
        // counters that map onto the same ring bits as the old ones must be fresh now
        for (long i = far - 100; i < far; i++) {
            assertThat(w.accept(i, LIMIT)).as("counter %d", i).isTrue();
        }
        assertThat(w.accept(299, LIMIT)).isFalse();
    }

    @Test
    void refusesAtAndBeyondTheLimitUnsigned() {
        ReplayWindow w = new ReplayWindow();
        assertThat(w.accept(LIMIT, LIMIT)).isFalse();
        assertThat(w.accept(-1L, LIMIT)).isFalse(); // 2^64 - 1
        assertThat(w.accept(LIMIT - 1, LIMIT)).isTrue();
    }
}
