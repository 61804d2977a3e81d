package org.jflannel.backend.udp;

/**
 * Ours: one routed peer's proof as {@link KernelProbe}'s thread decides it, from what the decapsulating program counted
 * ({@link ProofEvidence}) and nothing else. Only an answer carrying the nonce of our latest probe counts, which only the
 * peer saw: answered by its kernel (UDP checksum 0), the peer is proven; answered by its daemon (checksummed: its kernel
 * no longer encapsulates to us, e.g. restarted as upstream or with the kernel datapath off, its new lease not here
 * yet), it is unproven. A datagram anyone can send with the peer's address (UDP checksum 0, a checksummed TCP packet,
 * an echo reply with another payload) decides nothing: a checksummed TCP packet from a proven peer only makes it due
 * for a probe, at most one per {@link #RECHECK_EVERY_NANOS}, which the real peer answers; a proven peer is probed
 * anyway every {@link #REPROVE_EVERY_NANOS}. A peer that does not answer stays as it was (silence is no evidence: a
 * peer restarting answers nothing, and its new lease, or its daemon's answer once it is up, decides).
 *
 * <p>Not thread-safe: the probe's thread alone uses it.
 */
final class PeerProof {
    /** An unproven peer is probed this often. */
    static final long PROBE_EVERY_NANOS = 1_000_000_000L;
    /** A proven peer that sent checksummed TCP is probed again, at most this often. */
    static final long RECHECK_EVERY_NANOS = 1_000_000_000L;
    /**
     * A proven peer is probed again this often anyway: one restarted as upstream that sends us no TCP (its stack
     * drops what our kernel sends it, so it answers nothing) is unproven by its daemon's answer within this.
     */
    static final long REPROVE_EVERY_NANOS = 10_000_000_000L;

    /** What an observation changed. */
    enum Change { NONE, PROVEN, UNPROVEN }

    private boolean proven;
    /** What the peer's proof entry holds, as far as written: a fresh entry is unset. */
    private boolean written;
    private boolean suspected;
    private boolean awaiting;
    private boolean probedOnce;
    private long probedAt;
    private long nonce;
    private ProofEvidence last = ProofEvidence.NONE;

    boolean proven() {
        return proven;
    }

    /** Whether the peer's proof entry still has to be brought to {@link #proven()} (a write the kernel refused is retried). */
    boolean unwritten() {
        return written != proven;
    }

    /** The peer's proof entry now holds {@code proven}. */
    void written(boolean proven) {
        written = proven;
    }

    /** The nonce of the latest probe, 0 before the first. */
    long nonce() {
        return nonce;
    }

    /** Whether a probe is out and no answer to it has been observed yet. */
    boolean awaiting() {
        return awaiting;
    }

    /** Takes the peer's counts as read now and returns what they change. */
    Change observe(ProofEvidence now) {
        ProofEvidence d = now.since(last);
        last = now;
        boolean answered = d.kernelAnswers() > 0 || d.daemonAnswers() > 0;
        if (answered) {
            awaiting = false;
        }
        suspected = d.checksummedTcp() > 0 || (suspected && !answered);
        if (d.daemonAnswers() > 0) { // the safe side wins where both came in one window
            if (proven) {
                proven = false;
                return Change.UNPROVEN;
            }
            return Change.NONE;
        }
        if (d.kernelAnswers() > 0 && !proven) {
            proven = true;
            return Change.PROVEN;
        }
        return Change.NONE;
    }

    /**
     * Whether to probe at {@code now}: an unproven peer every {@link #PROBE_EVERY_NANOS}, a proven one every
     * {@link #REPROVE_EVERY_NANOS}, or {@link #RECHECK_EVERY_NANOS} after its last probe once it sent checksummed TCP.
     */
    boolean due(long now) {
        long gap = !proven ? PROBE_EVERY_NANOS : suspected ? RECHECK_EVERY_NANOS : REPROVE_EVERY_NANOS;
        return !probedOnce || now - probedAt >= gap;
    }

    /** A probe carrying {@code nonce} (non-zero) left at {@code now}. */
    void probed(long now, long nonce) {
        if (nonce == 0) {
            throw new IllegalArgumentException("probe nonce: must be non-zero");
        }
        this.nonce = nonce;
        probedAt = now;
        probedOnce = true;
        awaiting = true;
    }
}
