package org.jflannel.backend.udp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.jflannel.backend.udp.PeerProof.Change;
import org.junit.jupiter.api.Test;

/** A routed peer's proof as the probe's thread decides it from the program's counts alone. */
class PeerProofTest {
    private static final long S = 1_000_000_000L;

    @Test
    void anUnprovenPeerIsProbedEverySecondAndProvenOnlyByItsKernelsAnswer() {
        PeerProof p = new PeerProof();
        assertThat(p.due(0)).as("never probed").isTrue();
        p.probed(0, 7);
        assertThat(p.awaiting()).isTrue();
        assertThat(p.due(S / 2)).isFalse();
        assertThat(p.due(S)).isTrue();
        // what anyone can send with the peer's address: replies with another payload, TCP of either kind
        assertThat(p.observe(new ProofEvidence(0, 0, 500, 500))).isEqualTo(Change.NONE);
        assertThat(p.proven()).isFalse();
        assertThat(p.awaiting()).as("no answer yet").isTrue();
        assertThat(p.observe(new ProofEvidence(1, 0, 500, 500))).isEqualTo(Change.PROVEN);
        assertThat(p.proven()).isTrue();
        assertThat(p.awaiting()).isFalse();
        assertThat(p.unwritten()).as("the entry still says unproven").isTrue();
        p.written(true);
        assertThat(p.unwritten()).isFalse();
        assertThat(p.observe(new ProofEvidence(1, 0, 500, 500))).as("nothing new").isEqualTo(Change.NONE);
    }

    @Test
    void aProvenPeerIsUnprovenOnlyByItsDaemonsAnswer() {
        PeerProof p = proven();
        // a flood of forgeries: checksummed TCP makes it due for a probe, at most once a second, and changes nothing
        assertThat(p.observe(new ProofEvidence(1, 0, 1000, 3000))).isEqualTo(Change.NONE);
        assertThat(p.proven()).isTrue();
        assertThat(p.due(2 * S - 1)).as("within a second of the last probe").isFalse();
        assertThat(p.due(2 * S)).isTrue();
        p.probed(2 * S, 8);
        assertThat(p.observe(new ProofEvidence(2, 0, 2000, 6000))).as("its kernel answered").isEqualTo(Change.NONE);
        assertThat(p.due(3 * S)).as("more forged TCP came with the answer: probed again").isTrue();
        assertThat(p.observe(new ProofEvidence(2, 0, 2000, 6000))).isEqualTo(Change.NONE);
        p.probed(3 * S, 9);
        assertThat(p.observe(new ProofEvidence(3, 0, 2000, 6000))).isEqualTo(Change.NONE);
        assertThat(p.due(5 * S)).as("answered, no TCP since: only the every-ten-seconds probe").isFalse();
        assertThat(p.due(3 * S + PeerProof.REPROVE_EVERY_NANOS)).isTrue();
        // restarted as upstream: its daemon answers
        p.probed(13 * S, 10);
        assertThat(p.observe(new ProofEvidence(3, 1, 2000, 6000))).isEqualTo(Change.UNPROVEN);
        assertThat(p.proven()).isFalse();
        assertThat(p.unwritten()).isTrue();
    }

    @Test
    void bothAnswersInOneWindowLeaveThePeerUnproven() {
        PeerProof p = new PeerProof();
        p.probed(0, 7);
        assertThat(p.observe(new ProofEvidence(1, 1, 0, 0))).isEqualTo(Change.NONE);
        assertThat(p.proven()).isFalse();
        PeerProof q = proven();
        assertThat(q.observe(new ProofEvidence(2, 1, 0, 0))).isEqualTo(Change.UNPROVEN);
    }

    @Test
    void aSilentPeerStaysAsItWas() {
        PeerProof p = proven();
        for (int i = 2; i < 100; i++) {
            p.probed(i * S, i);
            assertThat(p.observe(new ProofEvidence(1, 0, i, 0))).isEqualTo(Change.NONE);
        }
        assertThat(p.proven()).isTrue();
    }

    @Test
    void anEntryMadeAnewCountsFromZero() {
        PeerProof p = proven();
        assertThat(p.observe(ProofEvidence.NONE)).isEqualTo(Change.NONE);
        assertThat(p.observe(new ProofEvidence(0, 1, 0, 0))).isEqualTo(Change.UNPROVEN);
    }

    @Test
    void aProbeNeedsANonce() {
        assertThatThrownBy(() -> new PeerProof().probed(0, 0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("nonce");
    }

    private static PeerProof proven() {
        PeerProof p = new PeerProof();
        p.probed(S, 7);
        assertThat(p.observe(new ProofEvidence(1, 0, 0, 0))).isEqualTo(Change.PROVEN);
        p.written(true);
        return p;
    }
}
