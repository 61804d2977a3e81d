package org.jflannel.backend.udp;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The udp kernel datapath's BPF map reads ({@link KernelPath#proven}, {@link KernelPath#counts},
 * {@link KernelPath#seen}): the values the kernel hands back, of any length and content (a map of another
 * image's layout pinned under the same name, a kernel that returns less): decoded, never an exception.
 * Property: the proof is its first four bytes' "any non-zero" (a 16-byte value as the daemon writes it,
 * {@link KernelPath#proofValue}, reads back as written), the counter the native-order u64 of its first
 * eight bytes (zero-extended when shorter), the seen entry ({@link ProofEvidence}) the four native-order
 * u64 of its first 32 bytes (zero-extended), and what came since an earlier read never negative.
 */
class KernelMapValuesFuzzTest {

    @FuzzTest(maxDuration = "5m")
    void bpfMapValues(byte[] value) {
        boolean proven = KernelPath.provenValue(value);
        boolean any = false;
        for (int i = 0; i < Math.min(4, value.length); i++) {
            any |= value[i] != 0;
        }
        if (proven != any) {
            throw new AssertionError("proof value read as " + proven);
        }
        if (value.length >= 8) {
            boolean flag = value[0] != 0;
            long nonce = ByteBuffer.wrap(value).getLong(0);
            if (KernelPath.provenValue(KernelPath.proofValue(flag, nonce)) != flag) {
                throw new AssertionError("proof value written as " + flag + " read back otherwise");
            }
        }
        long counter = KernelPath.counterValue(value);
        byte[] eight = java.util.Arrays.copyOf(value, 8);
        long want = ByteBuffer.wrap(eight).order(ByteOrder.nativeOrder()).getLong();
        if (counter != want) {
            throw new AssertionError("counter value read as " + counter + ", expected " + want);
        }
        ProofEvidence seen = ProofEvidence.of(value);
        ByteBuffer all = ByteBuffer.wrap(java.util.Arrays.copyOf(value, ProofEvidence.VALUE_BYTES)).order(ByteOrder.nativeOrder());
        ProofEvidence expected = new ProofEvidence(all.getLong(0), all.getLong(8), all.getLong(16), all.getLong(24));
        if (!seen.equals(expected)) {
            throw new AssertionError("seen value read as " + seen + ", expected " + expected);
        }
        ProofEvidence d = seen.since(new ProofEvidence(counter, counter, counter, counter));
        if (Long.compareUnsigned(d.kernelAnswers(), seen.kernelAnswers()) > 0 || Long.compareUnsigned(d.otherAnswers(),
                seen.otherAnswers()) > 0 || Long.compareUnsigned(d.daemonAnswers(), seen.daemonAnswers()) > 0
                || Long.compareUnsigned(d.checksummedTcp(), seen.checksummedTcp()) > 0) {
            throw new AssertionError("more came since an earlier read than the entry holds: " + d + " of " + seen);
        }
    }
}
