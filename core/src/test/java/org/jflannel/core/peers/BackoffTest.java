package org.jflannel.core.peers;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class BackoffTest {

    @Test
    void doublesFromOneSecondUpToThirty() {
        Backoff b = new Backoff(Duration.ofSeconds(1), Duration.ofSeconds(30));
        List<Long> seconds = new ArrayList<>();
        Duration d = b.min();
        for (int i = 0; i < 8; i++) {
            seconds.add(d.toSeconds());
            d = b.next(d);
        }
        assertThat(seconds).containsExactly(1L, 2L, 4L, 8L, 16L, 30L, 30L, 30L);
    }
}
