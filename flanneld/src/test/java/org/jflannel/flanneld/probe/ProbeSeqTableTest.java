package org.jflannel.flanneld.probe;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** Sequence numbers: handed out in order, in-use ones skipped across the wrap, released ones free again. */
class ProbeSeqTableTest {

    @Test
    void ownerIsFoundBySequenceAndReleasedNumbersAreFree() {
        ProbeSeqTable<String> t = new ProbeSeqTable<>();
        int a = t.claim("a");
        int b = t.claim("b");
        assertThat(b).isEqualTo(a + 1);
        assertThat(t.owner(a)).isEqualTo("a");
        assertThat(t.owner(b)).isEqualTo("b");
        t.release(a);
        t.release(a); // twice: still one release
        assertThat(t.owner(a)).isNull();
        assertThat(t.used()).isEqualTo(1);
        assertThat(t.owner(12345)).as("never claimed").isNull();
    }

    @Test
    void numbersStillInUseAreSkippedAfterTheWrap() {
        ProbeSeqTable<Integer> t = new ProbeSeqTable<>();
        int first = t.claim(0);
        int second = t.claim(1);
        for (int i = 2; i < ProbeSeqTable.SIZE; i++) {
            t.release(t.claim(i)); // the counter goes round once
        }
        int next = t.claim(-1);
        assertThat(next).as("wraps to 16 bits, past the two still out").isNotIn(first, second).isBetween(0, 0xffff);
        assertThat(t.owner(first)).isZero();
        assertThat(t.owner(second)).isEqualTo(1);
    }

    @Test
    void fullTableSaysSo() {
        ProbeSeqTable<Integer> t = new ProbeSeqTable<>();
        for (int i = 0; i < ProbeSeqTable.SIZE; i++) {
            t.claim(i);
        }
        assertThatThrownBy(() -> t.claim(-1)).hasMessageContaining("all 65536 in use");
    }
}
