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
 * back. Session 14 on Temurin 25 (three runs): a byte a step 96–116 ns, 8 bytes a step 70–74, the two
 * copies alone 41–46, one pass at three offsets 187–216 (longs) and 470–496 (bytes). The offsets are fields:
 * as constants, C2 vectorizes the one-pass byte loop too (95 ns), which it cannot in the engine.
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

    // the message's two pieces: 960 bytes at slot[16] against ks[64, 1024), then 460 at slot[976] against ks[0, 460);
    // fields, not constants, so that C2 knows the offsets no better than in the engine
    int at = 16;
    int ksFirst = 64;
    int first = 1024 - 64;
    int second = LEN - first;

    /** The engine until session 14: copy in, a byte a step at one index, copy out. */
    @Benchmark
    public byte threePass() {
        threePassPiece(at, ksFirst, first);
        threePassPiece(at + first, 0, second);
        return slot[100];
    }

    private void threePassPiece(int off, int ksAt, int n) {
        System.arraycopy(slot, off, chunk, ksAt, n);
        for (int j = ksAt, end = ksAt + n; j < end; j++) {
            chunk[j] ^= ks[j];
        }
        System.arraycopy(chunk, ksAt, slot, off, n);
    }

    /** The engine now: the xor 8 bytes a step at one index (the last long may run past the data, into bytes nobody reads). */
    @Benchmark
    public byte threePassLongs() {
        threePassLongsPiece(at, ksFirst, first);
        threePassLongsPiece(at + first, 0, second);
        return slot[100];
    }

    private void threePassLongsPiece(int off, int ksAt, int n) {
        System.arraycopy(slot, off, chunk, ksAt, n);
        for (int j = ksAt, end = ksAt + n; j < end; j += 8) {
            LONGS.set(chunk, j, (long) LONGS.get(chunk, j) ^ (long) LONGS.get(ks, j));
        }
        System.arraycopy(chunk, ksAt, slot, off, n);
    }

    /** Copies only (the cost of the two passes). */
    @Benchmark
    public byte copiesOnly() {
        System.arraycopy(slot, at, chunk, ksFirst, first);
        System.arraycopy(chunk, ksFirst, slot, at, first);
        System.arraycopy(slot, at + first, chunk, 0, second);
        System.arraycopy(chunk, 0, slot, at + first, second);
        return slot[100];
    }

    /** One pass, longs, three offsets. */
    @Benchmark
    public byte fusedLongs() {
        fusedLongsPiece(at, ksFirst, first);
        fusedLongsPiece(at + first, 0, second);
        return slot[100];
    }

    private void fusedLongsPiece(int off, int ksAt, int n) {
        int j = 0;
        for (; j + 8 <= n; j += 8) {
            LONGS.set(slot, off + j, (long) LONGS.get(slot, off + j) ^ (long) LONGS.get(ks, ksAt + j));
        }
        for (; j < n; j++) {
            slot[off + j] ^= ks[ksAt + j];
        }
    }

    /** One pass, bytes, two offsets. */
    @Benchmark
    public byte fusedBytes() {
        fusedBytesPiece(at, ksFirst, first);
        fusedBytesPiece(at + first, 0, second);
        return slot[100];
    }

    private void fusedBytesPiece(int off, int ksAt, int n) {
        for (int j = 0; j < n; j++) {
            slot[off + j] ^= ks[ksAt + j];
        }
    }
}
