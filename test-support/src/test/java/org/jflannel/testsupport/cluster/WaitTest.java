package org.jflannel.testsupport.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class WaitTest {

    @Test
    void returnsTheFirstAcceptedValue() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        int v = Wait.until("third call", Duration.ofSeconds(10), calls::incrementAndGet, n -> n >= 3);
        assertThat(v).isEqualTo(3);
    }

    @Test
    void probeExceptionsCountAsNotYet() throws Exception {
        AtomicInteger calls = new AtomicInteger();
        Wait.until("second call", Duration.ofSeconds(10), () -> {
            if (calls.incrementAndGet() < 2) {
                throw new IllegalStateException("not yet");
            }
            return true;
        });
        assertThat(calls).hasValue(2);
    }

    @Test
    void timesOutNamingWhatWasAwaitedAndWhatWasLastSeen() {
        assertThatThrownBy(() -> Wait.until("the impossible", Duration.ofMillis(300), () -> "still 42", s -> false))
                .isInstanceOf(Wait.TimeoutException.class)
                .hasMessageContaining("waiting for the impossible")
                .hasMessageContaining("last seen: still 42");
    }

    @Test
    void abortEndsTheWaitAtOnce() {
        AtomicInteger calls = new AtomicInteger();
        assertThatThrownBy(() -> Wait.until("a dead process", Duration.ofMinutes(5), () -> {
            calls.incrementAndGet();
            throw new Wait.Abort("it exited 1");
        })).isInstanceOf(Wait.Abort.class).hasMessage("it exited 1");
        assertThat(calls).hasValue(1);
    }
}
