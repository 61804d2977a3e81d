package org.jflannel.flanneld.probe;

import java.util.EnumMap;
import java.util.EnumSet;
import java.util.Map;
import java.util.Set;

/**
 * One probe round of one peer, as a small state machine. Phase 1 sends a small and a full-size
 * probe through the overlay. When the small one fails, phase 2 sends it once more (one lost packet
 * is not an outage) together with a plain probe to the peer's public IP, so the round can say why.
 */
final class Round {
    /** The probes a round may send. */
    enum Probe { SMALL, FULL_SIZE, RETRY, UNDERLAY }

    final PeerTarget target;
    private final Map<Probe, Outcome> outcomes = new EnumMap<>(Probe.class);
    private final Map<Probe, Integer> seqs = new EnumMap<>(Probe.class);
    private final Set<Probe> outstanding = EnumSet.noneOf(Probe.class);
    private int phase = 1;
    private long deadlineNanos;

    Round(PeerTarget target, long deadlineNanos) {
        this.target = target;
        this.deadlineNanos = deadlineNanos;
    }

    void sent(Probe p, int seq) {
        seqs.put(p, seq);
        outstanding.add(p);
    }

    /** Records what happened to {@code p}; later news of the same probe is ignored. */
    void resolve(Probe p, Outcome o) {
        if (outstanding.remove(p) || !outcomes.containsKey(p)) {
            outcomes.put(p, o);
        }
    }

    /** Everything of this phase answered, or its time is up. */
    boolean phaseOver(long nowNanos) {
        return outstanding.isEmpty() || nowNanos - deadlineNanos >= 0;
    }

    /** Marks what is still outstanding as lost; returns their sequence numbers (to forget). */
    int[] expire() {
        int[] gone = outstanding.stream().mapToInt(seqs::get).toArray();
        for (Probe p : outstanding) {
            outcomes.put(p, Outcome.LOST);
        }
        outstanding.clear();
        return gone;
    }

    /** After phase 1: the small probe failed, so retry it and ask the underlay. */
    boolean needsSecondPhase() {
        return phase == 1 && !outcome(Probe.SMALL).ok();
    }

    void startSecondPhase(long deadlineNanos) {
        phase = 2;
        this.deadlineNanos = deadlineNanos;
    }

    /** The small probe's verdict: the retry's when there was one. */
    Outcome small() {
        Outcome retry = outcomes.get(Probe.RETRY);
        return retry != null ? retry : outcome(Probe.SMALL);
    }

    Outcome fullSize() {
        return outcome(Probe.FULL_SIZE);
    }

    /** Null when the underlay was not asked (the overlay answered). */
    Outcome underlay() {
        return outcomes.get(Probe.UNDERLAY);
    }

    private Outcome outcome(Probe p) {
        return outcomes.getOrDefault(p, Outcome.LOST);
    }
}
