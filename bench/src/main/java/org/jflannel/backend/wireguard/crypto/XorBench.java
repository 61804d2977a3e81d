package org.jflannel.backend.wireguard.crypto;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

/**
 * Ways to xor a 1,420-byte WireGuard message with its keystream as {@code IntrinsicEngine.crypt} gets
 * it (session 14, issue 22): bytes 64…1,023 of a first 1,024-byte chunk, then 0…459 of a second; the
 * message in place in a slot at offset 16. C2 (JDK 25) vectorizes a loop over two arrays at one index
 * but not at two offsets it cannot tell apart, hence the copy into a buffer beside the keystream and
 * back. Session 14 on Temurin 25 (two runs): a byte a step 96–116 ns, 8 bytes a step 70–74, the two
 * copies alone 45–46, one pass at three offsets 187–190 (longs) and 490–496 (bytes).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(1)
public class XorBench {
    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    static final int LEN = 1420;
    byte[] slot = new byte[2048];
    byte[] ks = new byte[1024];
    byte[] chunk = new byte[1024 + 8];

    @Setup
    public void setUp() {
        for (int i = 0; i < ks.length; i++) {
            ks[i] = (byte) (i * 7 + 1);
        }
        for (int i = 0; i < slot.length; i++) {
            slot[i] = (byte) (i * 13 + 3);
        }
    }

    /** The engine until session 14: copy in, a byte a step at one index, copy out. */
    @Benchmark
    public byte threePass() {
        int off = 16, len = LEN, ksAt = 64;
        while (len > 0) {
            int n = Math.min(len, 1024 - ksAt);
            System.arraycopy(slot, off, chunk, ksAt, n);
            for (int j = ksAt, end = ksAt + n; j < end; j++) {
                chunk[j] ^= ks[j];
            }
            System.arraycopy(chunk, ksAt, slot, off, n);
            off += n;
            len -= n;
            ksAt = 0;
        }
        return slot[100];
    }

    /** Copies only (the cost of the two passes). */
    @Benchmark
    public byte copiesOnly() {
        int off = 16, len = LEN, ksAt = 64;
        while (len > 0) {
            int n = Math.min(len, 1024 - ksAt);
            System.arraycopy(slot, off, chunk, ksAt, n);
            System.arraycopy(chunk, ksAt, slot, off, n);
            off += n;
            len -= n;
            ksAt = 0;
        }
        return slot[100];
    }

    /** One pass, longs, three offsets. */
    @Benchmark
    public byte fusedLongs() {
        int off = 16, len = LEN, ksAt = 64;
        byte[] s = slot;
        byte[] k = ks;
        while (len > 0) {
            int n = Math.min(len, 1024 - ksAt);
            int j = 0;
            for (; j + 8 <= n; j += 8) {
                LONGS.set(s, off + j, (long) LONGS.get(s, off + j) ^ (long) LONGS.get(k, ksAt + j));
            }
            for (; j < n; j++) {
                s[off + j] ^= k[ksAt + j];
            }
            off += n;
            len -= n;
            ksAt = 0;
        }
        return slot[100];
    }

    /** One pass, bytes, two offsets. */
    @Benchmark
    public byte fusedBytes() {
        int off = 16, len = LEN, ksAt = 64;
        byte[] s = slot;
        byte[] k = ks;
        while (len > 0) {
            int n = Math.min(len, 1024 - ksAt);
            for (int j = 0; j < n; j++) {
                s[off + j] ^= k[ksAt + j];
            }
            off += n;
            len -= n;
            ksAt = 0;
        }
        return slot[100];
    }

    /** The engine now: the xor 8 bytes a step at one index (the last long may run past the data, into bytes nobody reads). */
    @Benchmark
    public byte threePassLongs() {
        int off = 16, len = LEN, ksAt = 64;
        while (len > 0) {
            int n = Math.min(len, 1024 - ksAt);
            System.arraycopy(slot, off, chunk, ksAt, n);
            for (int j = ksAt, end = ksAt + n; j < end; j += 8) {
                LONGS.set(chunk, j, (long) LONGS.get(chunk, j) ^ (long) LONGS.get(ks, j));
            }
            System.arraycopy(chunk, ksAt, slot, off, n);
            off += n;
            len -= n;
            ksAt = 0;
        }
        return slot[100];
    }
}
