package org.jflannel.backend.wireguard.crypto;

import java.lang.invoke.MethodHandle;
import java.security.Key;
import java.util.concurrent.TimeUnit;
import javax.crypto.spec.SecretKeySpec;
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
 * Where {@link IntrinsicEngine}'s ≈ 730 ns per 1,420-byte message go (session 14, issue 22): the ChaCha20
 * block intrinsic (one call: 16 blocks; a message needs two), the Poly1305 engine over a message's 1,408
 * bytes of whole blocks in one call and in two (as a piece-by-piece pass would feed it: the IFMA stub's
 * set-up is paid per call), the lengths block as a call of its own, and the whole seal in place. Run on
 * Temurin 25; the fork gets the launchers' opens.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--add-opens=java.base/com.sun.crypto.provider=ALL-UNNAMED", "--add-exports=java.base/sun.security.util.math=ALL-UNNAMED"})
public class AeadPartsBench {
    private static final MethodHandle UPDATE = JdkInternals.POLY_UPDATE;
    private final int[] state = new int[16];
    private final byte[] keystream = new byte[1024 + 8];
    private final byte[] key = new byte[32];
    private final byte[] message = new byte[2048];
    private IntrinsicEngine engine;
    private final Poly1305x64 poly64 = new Poly1305x64();
    private Object poly;
    private long counter;

    @Setup
    public void setUp() throws Throwable {
        if (JdkInternals.UNAVAILABLE != null) {
            throw new IllegalStateException("jdk internals unavailable: " + JdkInternals.UNAVAILABLE);
        }
        for (int i = 0; i < key.length; i++) {
            key[i] = (byte) (i + 1);
        }
        state[0] = 0x61707865;
        engine = new IntrinsicEngine();
        poly = (Object) JdkInternals.POLY_NEW.invokeExact(false);
        JdkInternals.POLY_INIT.invokeExact(poly, (Key) new SecretKeySpec(key, "Poly1305"), (java.security.spec.AlgorithmParameterSpec) null);
    }

    @Benchmark
    public int keystreamOneCall() throws Throwable {
        state[14]++;
        return (int) JdkInternals.CHACHA_BLOCK.invokeExact(state, keystream);
    }

    @Benchmark
    public int keystreamTwoCalls() throws Throwable {
        state[14]++;
        state[12] = 0;
        int n = (int) JdkInternals.CHACHA_BLOCK.invokeExact(state, keystream);
        state[12] = 16;
        return n + (int) JdkInternals.CHACHA_BLOCK.invokeExact(state, keystream);
    }

    @Benchmark
    public Object polyOneCall() throws Throwable {
        UPDATE.invokeExact(poly, message, 0, 1408);
        return poly;
    }

    @Benchmark
    public Object polyTwoCalls() throws Throwable {
        UPDATE.invokeExact(poly, message, 0, 960);
        UPDATE.invokeExact(poly, message, 960, 448);
        return poly;
    }

    @Benchmark
    public Object polyThenLengthsBlock() throws Throwable {
        UPDATE.invokeExact(poly, message, 0, 1408);
        UPDATE.invokeExact(poly, message, 1408, 16);
        return poly;
    }

    /** Our radix-2^64 Poly1305 (issue 40) over the same 1,408 bytes, keyed per call as per message. */
    @Benchmark
    public Object poly64OneCall() {
        poly64.key(key, 0);
        poly64.blocks(message, 0, 1408);
        return poly64;
    }

    /** The keystream a 1,420-byte message needs (24 blocks, whatever the intrinsic's width: 2 calls with AVX-512, 6 with AVX2). */
    @Benchmark
    public int keystreamFor1420() throws Throwable {
        state[14]++;
        int n = 0;
        for (int b = 0; b < 24; b += n >>> 6) {
            state[12] = b;
            n = (int) JdkInternals.CHACHA_BLOCK.invokeExact(state, keystream);
        }
        return n;
    }

    @Benchmark
    public int sealInPlace() {
        return engine.seal(key, 0, ++counter, message, 16, 1420, null, message, 16);
    }
}
