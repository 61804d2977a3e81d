package org.jflannel.core.peers;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class PeerCountersTest {
    enum Kind { WRITE, DUMP, SKIPPED }

    /** A backend's counters as vxlan's and host-gw's are: writers of their own, the loop's through LoopCounters. */
    static final class Counters extends PeerCounters<Kind> {
        Counters() {
            super(Kind.class, Kind.SKIPPED, Kind.DUMP);
        }

        void wrote(int n) {
            countProgrammed(n);
        }

        void deleted(int n) {
            countRemoved(n);
        }

        void failed(Kind k) {
            countError(k);
        }
    }

    @Test
    void loopReportsLandOnTheKindsTheBackendNamed() {
        Counters c = new Counters();
        LoopCounters loop = c;
        loop.leaseSkipped();
        loop.leaseSkipped();
        loop.readFailed();
        assertThat(c.errors(Kind.SKIPPED)).isEqualTo(2);
        assertThat(c.errors(Kind.DUMP)).isEqualTo(1);
        assertThat(c.errors(Kind.WRITE)).isZero();
    }

    @Test
    void entriesRepairsAndPassesAddUp() {
        Counters c = new Counters();
        c.wrote(3);
        c.wrote(1);
        c.deleted(2);
        c.repaired(2);
        c.repaired(1);
        c.reconciled();
        c.failed(Kind.WRITE);
        assertThat(c.entriesProgrammed()).isEqualTo(4);
        assertThat(c.entriesRemoved()).isEqualTo(2);
        assertThat(c.repairs()).isEqualTo(3);
        assertThat(c.reconciles()).isEqualTo(1);
        assertThat(c.errors(Kind.WRITE)).isEqualTo(1);
    }

    @Test
    void errorKindsAreEveryKindInDeclarationOrder() {
        assertThat(new Counters().errorKinds()).containsExactly(Kind.WRITE, Kind.DUMP, Kind.SKIPPED);
    }
}
