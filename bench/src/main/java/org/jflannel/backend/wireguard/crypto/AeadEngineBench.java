package org.jflannel.backend.wireguard.crypto;

import java.security.SecureRandom;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The engines behind {@code ChaChaPoly} in one run (session 9, issue 22; issue 40): {@code jdk-cipher}
 * (the public {@code Cipher}, an init per message), {@code jdk-intrinsics} (the JDK's intrinsified
 * ChaCha20 block function and Poly1305 reached directly) and {@code jdk-chacha20-poly64} (the JDK's
 * ChaCha20 with our radix-2^64 Poly1305, for CPUs without IFMA; run with {@code -jvmArgsAppend}
 * {@code -XX:UseAVX=2} plus the opens below to emulate one: a command-line {@code -jvmArgsAppend}
 * replaces the annotation's). WireGuard's transport shape: no AAD,
 * counter nonce, arrays; seal out of place and in place, open in place. The fork gets the
 * launchers' {@code --add-opens}. At the end of each iteration the intrinsic engine prints how many
 * keystream bytes one block-function call gave (1,024: C2 applied the AVX-512 intrinsic; 64: Java).
 * Run on Temurin 25 with {@code -prof org.jflannel.backend.wireguard.CpuTimeProfiler -prof gc}.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {"--add-opens=java.base/com.sun.crypto.provider=ALL-UNNAMED", "--add-exports=java.base/sun.security.util.math=ALL-UNNAMED"})
public class AeadEngineBench {
    @Param({"jdk-cipher", "jdk-intrinsics", "jdk-chacha20-poly64"})
    String engine;

    @Param({"1420", "65536"})
    int size;

    private AeadEngine aead;
    private final byte[] key = new byte[32];
    private byte[] plain;
    private byte[] out;
    private byte[] inPlace;
    private byte[] sealed;
    private byte[] opened;
    private long counter;

    @Setup
    public void setUp() {
        if (JdkInternals.UNAVAILABLE != null && !engine.equals("jdk-cipher")) {
            throw new IllegalStateException("jdk internals unavailable: " + JdkInternals.UNAVAILABLE);
        }
        aead = switch (engine) {
            case "jdk-cipher" -> new CipherEngine();
            case "jdk-intrinsics" -> new IntrinsicEngine();
            default -> new Poly64Engine();
        };
        SecureRandom random = new SecureRandom();
        random.nextBytes(key);
        plain = new byte[size];
        random.nextBytes(plain);
        out = new byte[size + 16];
        inPlace = new byte[16 + size + 16];
        System.arraycopy(plain, 0, inPlace, 16, size);
        sealed = new byte[size + 16];
        new CipherEngine().seal(key, 0, 7, plain, 0, size, null, sealed, 0);
        opened = new byte[16 + size + 16];
    }

    @TearDown(Level.Iteration)
    public void keystreamPerCall() {
        if (aead instanceof IntrinsicEngine e) {
            System.err.println("keystream bytes per block call: " + e.lastKeystreamBytes());
        } else if (aead instanceof Poly64Engine e) {
            System.err.println("keystream bytes per block call: " + e.lastKeystreamBytes());
        }
    }

    @Benchmark
    public int seal() {
        return aead.seal(key, 0, ++counter, plain, 0, size, null, out, 0);
    }

    /** As the data plane: the packet sealed where it lies (after the 16-byte header). */
    @Benchmark
    public int sealInPlace() {
        return aead.seal(key, 0, ++counter, inPlace, 16, size, null, inPlace, 16);
    }

    /** As the data plane: a datagram opened over itself (the ciphertext copied in first: 1,436 bytes of copy in the figure). */
    @Benchmark
    public int openInPlace() {
        System.arraycopy(sealed, 0, opened, 16, size + 16);
        int n = aead.open(key, 0, 7, opened, 16, size + 16, null, opened, 16);
        if (n != size) {
            throw new IllegalStateException("tag failed");
        }
        return n;
    }
}
