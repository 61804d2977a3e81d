package org.jflannel.flanneld.probe;

/**
 * One probe round of one peer, as a small state machine. Phase 1 sends a small and a full-size
 * probe through the overlay. When the small one fails, phase 2 sends it once more (one lost packet
 * is not an outage) together with a plain probe to the peer's public IP, so the round can say why.
 * Its state is a few arrays indexed by {@link Probe#ordinal()} (200 rounds a second start at 2,000
 * peers: no enum maps or sets per round).
 */
final class Round {
    /** The probes a round may send. */
    enum Probe { SMALL, FULL_SIZE, RETRY, UNDERLAY }

    private static final Probe[] PROBES = Probe.values();

    final PeerTarget target;
    private final Outcome[] outcomes = new Outcome[PROBES.length];
    private final int[] seqs = new int[PROBES.length];
    private final long[] sentNanos = new long[PROBES.length];
    /** Bit {@code 1 << ordinal} per probe sent and not yet resolved. */
    private int outstanding;
    private int phase = 1;
    private long deadlineNanos;

    Round(PeerTarget target, long deadlineNanos) {
        this.target = target;
        this.deadlineNanos = deadlineNanos;
    }

    void sent(Probe p, int seq, long atNanos) {
        seqs[p.ordinal()] = seq;
        sentNanos[p.ordinal()] = atNanos;
        outstanding |= 1 << p.ordinal();
    }

    /** The probe still waiting for an answer under sequence number {@code seq}; null when none is. */
    Probe outstanding(int seq) {
        for (Probe p : PROBES) {
            if ((outstanding & 1 << p.ordinal()) != 0 && seqs[p.ordinal()] == seq) {
                return p;
            }
        }
        return null;
    }

    /** When {@code p} was sent ({@link System#nanoTime()}). */
    long sentNanos(Probe p) {
        return sentNanos[p.ordinal()];
    }

    /** Records what happened to {@code p}; later news of the same probe is ignored. */
    void resolve(Probe p, Outcome o) {
        int bit = 1 << p.ordinal();
        if ((outstanding & bit) != 0 || outcomes[p.ordinal()] == null) {
            outstanding &= ~bit;
            outcomes[p.ordinal()] = o;
        }
    }

    /** Everything of this phase answered, or its time is up. */
    boolean phaseOver(long nowNanos) {
        return outstanding == 0 || nowNanos - deadlineNanos >= 0;
    }

    /** Marks what is still outstanding as lost; returns their sequence numbers (to forget). */
    int[] expire() {
        int[] gone = new int[Integer.bitCount(outstanding)];
        int n = 0;
        for (Probe p : PROBES) {
            if ((outstanding & 1 << p.ordinal()) != 0) {
                gone[n++] = seqs[p.ordinal()];
                outcomes[p.ordinal()] = Outcome.LOST;
            }
        }
        outstanding = 0;
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
        Outcome retry = outcomes[Probe.RETRY.ordinal()];
        return retry != null ? retry : outcome(Probe.SMALL);
    }

    Outcome fullSize() {
        return outcome(Probe.FULL_SIZE);
    }

    /** Null when the underlay was not asked (the overlay answered). */
    Outcome underlay() {
        return outcomes[Probe.UNDERLAY.ordinal()];
    }

    private Outcome outcome(Probe p) {
        Outcome o = outcomes[p.ordinal()];
        return o != null ? o : Outcome.LOST;
    }
}
