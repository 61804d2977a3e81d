package org.jflannel.backend.wireguard.protocol;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class HandshakeLoadTest {
    private long now = 5_000_000_000L;

    @Test
    void aBurstAboveTheThresholdMeansLoadForTheHoldTime() {
        HandshakeLoad load = HandshakeLoad.standard(() -> now);
        for (int i = 0; i < 64; i++) {
            load.arrived();
        }
        assertThat(load.underLoad()).isFalse();
        load.arrived();
        assertThat(load.underLoad()).isTrue();
        now += 999_000_000L;
        assertThat(load.underLoad()).isTrue();
        now += 2_000_000L;
        assertThat(load.underLoad()).isFalse();
    }

    @Test
    void aSteadyTrickleNeverIs() {
        HandshakeLoad load = HandshakeLoad.standard(() -> now);
        for (int i = 0; i < 1000; i++) {
            load.arrived();
            now += 2_000_000L; // 500 per second, 50 per window
            assertThat(load.underLoad()).isFalse();
        }
    }

    @Test
    void aBacklogInOneSocketReadMeansLoad() {
        HandshakeLoad load = HandshakeLoad.standard(() -> now);
        load.backlog(15);
        assertThat(load.underLoad()).isFalse();
        load.backlog(16);
        assertThat(load.underLoad()).isTrue();
        now += 1_001_000_000L;
        assertThat(load.underLoad()).isFalse();
    }
}
