package org.jflannel.backend.udp;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Ours: what a routed peer's datagrams have shown about its kernel, as the decapsulating program counts them in
 * that peer's {@code jfl_udp_seen} entry ({@link KernelPrograms#seen}): answers to our probe's nonce sent by the
 * peer's kernel (UDP checksum 0) and by its daemon (checksummed), echo replies of the probe's identifier with another
 * payload (late, or forged), and checksummed TCP packets (a reason to probe again, never a verdict).
 */
record ProofEvidence(long kernelAnswers, long daemonAnswers, long checksummedTcp, long otherAnswers) {
    static final ProofEvidence NONE = new ProofEvidence(0, 0, 0, 0);
    /** The value's length in the map: four u64. */
    static final int VALUE_BYTES = 8 * KernelPrograms.SEEN_SLOTS;

    /**
     * A value of {@code jfl_udp_seen}: four native-order u64 in {@link KernelPrograms}' slot order; a shorter one read
     * as far as it goes (the missing bytes zero), a longer one's tail ignored. Never throws: the kernel's reply is
     * decoded whatever its length.
     */
    static ProofEvidence of(byte[] value) {
        ByteBuffer b = ByteBuffer.allocate(VALUE_BYTES).order(ByteOrder.nativeOrder());
        b.put(value, 0, Math.min(value.length, VALUE_BYTES));
        return new ProofEvidence(b.getLong(8 * KernelPrograms.SEEN_KERNEL_ANSWERS), b.getLong(8 * KernelPrograms.SEEN_DAEMON_ANSWERS),
                b.getLong(8 * KernelPrograms.SEEN_CHECKSUMMED_TCP), b.getLong(8 * KernelPrograms.SEEN_OTHER_ANSWERS));
    }

    /**
     * What came after {@code before} (an earlier read of the same entry); a count below its earlier value (the entry
     * was made anew, or is not what we read before) counts from zero.
     */
    ProofEvidence since(ProofEvidence before) {
        return new ProofEvidence(delta(kernelAnswers, before.kernelAnswers), delta(daemonAnswers, before.daemonAnswers),
                delta(checksummedTcp, before.checksummedTcp), delta(otherAnswers, before.otherAnswers));
    }

    private static long delta(long now, long before) {
        return Long.compareUnsigned(now, before) >= 0 ? now - before : now;
    }
}
