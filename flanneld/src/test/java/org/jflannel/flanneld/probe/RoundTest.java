package org.jflannel.flanneld.probe;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.Inet4Address;
import java.net.InetAddress;
import org.jflannel.core.Ip4Net;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseAttrs;
import org.junit.jupiter.api.Test;

/** A round's phases on a made-up clock: when it asks the underlay, and what counts as the small probe's verdict. */
class RoundTest {
    private final PeerTarget peer;

    RoundTest() throws Exception {
        peer = PeerTarget.of(new Lease(Ip4Net.parse("10.244.2.0/24"), null,
                new LeaseAttrs((Inet4Address) InetAddress.getByName("192.0.2.12"), null, "udp", null, null), null)).orElseThrow();
    }

    @Test
    void answeredRoundEndsWithoutAskingTheUnderlay() {
        Round r = new Round(peer, 1000);
        r.sent(Round.Probe.SMALL, 1, 0);
        r.sent(Round.Probe.FULL_SIZE, 2, 0);
        r.resolve(Round.Probe.SMALL, Outcome.ok(0.001));
        assertThat(r.phaseOver(10)).as("full size still out, deadline not reached").isFalse();
        r.resolve(Round.Probe.FULL_SIZE, Outcome.ok(0.001));
        assertThat(r.phaseOver(10)).isTrue();
        assertThat(r.needsSecondPhase()).isFalse();
        assertThat(r.underlay()).isNull();
    }

    @Test
    void lostSmallProbeAsksTheUnderlayAndTheRetryDecides() {
        Round r = new Round(peer, 1000);
        r.sent(Round.Probe.SMALL, 1, 0);
        r.sent(Round.Probe.FULL_SIZE, 2, 0);
        assertThat(r.phaseOver(1000)).as("deadline").isTrue();
        assertThat(r.expire()).containsExactlyInAnyOrder(1, 2);
        assertThat(r.needsSecondPhase()).isTrue();
        r.startSecondPhase(2000);
        r.sent(Round.Probe.RETRY, 3, 0);
        r.sent(Round.Probe.UNDERLAY, 4, 0);
        r.resolve(Round.Probe.RETRY, Outcome.ok(0.002));
        r.resolve(Round.Probe.UNDERLAY, Outcome.ok(0.001));
        assertThat(r.phaseOver(1500)).isTrue();
        assertThat(r.needsSecondPhase()).as("only once").isFalse();
        assertThat(r.small().ok()).as("the retry's verdict").isTrue();
        assertThat(r.fullSize()).isEqualTo(Outcome.LOST);
    }

    @Test
    void sendErrorResolvesAtOnce() {
        Round r = new Round(peer, 1000);
        r.resolve(Round.Probe.FULL_SIZE, Outcome.error("send EMSGSIZE"));
        assertThat(r.fullSize().describe()).isEqualTo("error: send EMSGSIZE");
        assertThat(r.phaseOver(0)).isTrue();
    }

    @Test
    void outstandingProbeIsFoundByItsSequenceUntilResolvedOrExpired() {
        Round r = new Round(peer, 1000);
        r.sent(Round.Probe.SMALL, 10, 111);
        r.sent(Round.Probe.FULL_SIZE, 11, 112);
        assertThat(r.outstanding(10)).isEqualTo(Round.Probe.SMALL);
        assertThat(r.outstanding(11)).isEqualTo(Round.Probe.FULL_SIZE);
        assertThat(r.outstanding(12)).isNull();
        assertThat(r.sentNanos(Round.Probe.FULL_SIZE)).isEqualTo(112);
        r.resolve(Round.Probe.SMALL, Outcome.ok(0.001));
        assertThat(r.outstanding(10)).as("answered").isNull();
        assertThat(r.expire()).containsExactly(11);
        assertThat(r.outstanding(11)).as("expired").isNull();
        assertThat(r.fullSize()).isEqualTo(Outcome.LOST);
        r.resolve(Round.Probe.FULL_SIZE, Outcome.ok(0.002));
        assertThat(r.fullSize()).as("late news of an expired probe is ignored").isEqualTo(Outcome.LOST);
    }
}
