package org.jflannel.backend.udp;

import com.code_intelligence.jazzer.junit.FuzzTest;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * The udp kernel datapath's BPF map reads ({@link KernelPath#proven}, {@link KernelPath#counts}): the
 * values the kernel hands back, of any length and content (a map of another image's layout pinned
 * under the same name, a kernel that returns less): decoded, never an exception. Property: the proof
 * is its first four bytes' "any non-zero", the counter the native-order u64 of its first eight bytes
 * (zero-extended when shorter).
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
        long counter = KernelPath.counterValue(value);
        byte[] eight = java.util.Arrays.copyOf(value, 8);
        long want = ByteBuffer.wrap(eight).order(ByteOrder.nativeOrder()).getLong();
        if (counter != want) {
            throw new AssertionError("counter value read as " + counter + ", expected " + want);
        }
    }
}
