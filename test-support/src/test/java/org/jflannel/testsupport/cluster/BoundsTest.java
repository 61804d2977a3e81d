package org.jflannel.testsupport.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class BoundsTest {

    @Test
    void theHostsBoundsStandOnTheHostAndGrowInTheVmAndByTheDeclaredSlowdown() {
        assertThat(Bounds.factor(false, null)).isEqualTo(1.0);
        assertThat(Bounds.factor(true, null)).isEqualTo(3.0);
        assertThat(Bounds.factor(false, "2.5")).isEqualTo(2.5);
        assertThat(Bounds.factor(true, " 2 ")).isEqualTo(6.0);
    }

    @Test
    void aSlowdownThatIsNoSensibleNumberIsRefusedNamingTheVariable() {
        for (String bad : new String[] {"fast", "0.5", "NaN", "100"}) {
            assertThatThrownBy(() -> Bounds.factor(false, bad)).hasMessageStartingWith("JFLANNEL_TEST_SLOWDOWN: expected a number");
        }
    }
}
