package org.jflannel.backend.wireguard.crypto;

import java.nio.ByteBuffer;
import java.util.Optional;

/**
 * ChaCha20-Poly1305 (RFC 8439) with WireGuard's nonce (32 zero bits, then the 64-bit counter little
 * endian). One instance per thread: the engine behind it keeps its state. A failed tag is an empty
 * result (or -1), never an exception for the caller to forget. Sealing and opening in place
 * ({@code in == out}, same offset) is allowed: the data plane does it.
 *
 * <p>The engine is chosen once per process ({@link AeadPaths}, logged at the first use):
 * {@link IntrinsicEngine}, the JDK's own intrinsified ChaCha20 block function and Poly1305 reached
 * directly without the public cipher's per-message set-up (needs
 * {@code --add-opens java.base/com.sun.crypto.provider=ALL-UNNAMED}, which the jar's manifest gives, and
 * JDK 21+) where the JVM has IFMA for the JDK's Poly1305 intrinsic; {@link Poly64Engine}, the same
 * ChaCha20 with our radix-2^64 Poly1305, where it has not; else {@link CipherEngine}, the public
 * {@code Cipher} API. Same bytes every way; costs in docs/benchmarks.md ("wireguard AEAD, session 9",
 * "issue 40").
 */
public final class ChaChaPoly {
    public static final int TAG = 16;
    private final AeadEngine engine;

    public ChaChaPoly() {
        this(AeadPaths.newEngine());
    }

    ChaChaPoly(AeadEngine engine) {
        this.engine = engine;
    }

    /** The engine this process uses ({@code jdk-intrinsics}, {@code jdk-chacha20-poly64} or {@code jdk-cipher}). */
    public static String path() {
        return AeadPaths.choice().name();
    }

    public byte[] seal(byte[] key, long counter, byte[] plain, byte[] aad) {
        byte[] out = new byte[plain.length + TAG];
        engine.seal(key, 0, counter, plain, 0, plain.length, aad, out, 0);
        return out;
    }

    public Optional<byte[]> open(byte[] key, long counter, byte[] sealed, byte[] aad) {
        if (sealed.length < TAG) {
            return Optional.empty();
        }
        byte[] out = new byte[sealed.length - TAG];
        return engine.open(key, 0, counter, sealed, 0, sealed.length, aad, out, 0) < 0 ? Optional.empty() : Optional.of(out);
    }

    /** Seals {@code in}'s remaining bytes into {@code out} at its position (no AAD: transport data). Returns bytes written. */
    public int seal(byte[] key, long counter, ByteBuffer in, ByteBuffer out) {
        int len = in.remaining();
        if (out.remaining() < len + TAG) {
            throw new IllegalArgumentException("chacha20-poly1305 seal: out has " + out.remaining() + " bytes, needs " + (len + TAG));
        }
        byte[] src = bytes(in);
        byte[] dst = out.hasArray() ? out.array() : new byte[len + TAG];
        int dstOff = out.hasArray() ? out.arrayOffset() + out.position() : 0;
        int n = engine.seal(key, 0, counter, src, 0, len, null, dst, dstOff);
        advance(out, dst, n);
        return n;
    }

    /** Opens {@code in}'s remaining bytes into {@code out}; -1 when the tag fails (nothing usable written). */
    public int open(byte[] key, long counter, ByteBuffer in, ByteBuffer out) {
        int len = in.remaining();
        if (len < TAG) {
            return -1;
        }
        if (out.remaining() < len - TAG) {
            throw new IllegalArgumentException("chacha20-poly1305 open: out has " + out.remaining() + " bytes, needs " + (len - TAG));
        }
        byte[] src = bytes(in);
        byte[] dst = out.hasArray() ? out.array() : new byte[len - TAG];
        int dstOff = out.hasArray() ? out.arrayOffset() + out.position() : 0;
        int n = engine.open(key, 0, counter, src, 0, len, null, dst, dstOff);
        if (n >= 0) {
            advance(out, dst, n);
        }
        return n;
    }

    /** Seals {@code in[off, off + len)} into {@code out} at {@code outOff} (no AAD: transport data). Returns bytes written. */
    public int seal(byte[] key, long counter, byte[] in, int off, int len, byte[] out, int outOff) {
        return engine.seal(key, 0, counter, in, off, len, null, out, outOff);
    }

    /** Opens {@code in[off, off + len)} into {@code out} at {@code outOff}; -1 when the tag fails. */
    public int open(byte[] key, long counter, byte[] in, int off, int len, byte[] out, int outOff) {
        return engine.open(key, 0, counter, in, off, len, null, out, outOff);
    }

    /** The buffer's remaining bytes as an array of their own (the buffer's position moves past them): the rare buffer path copies, the data plane uses arrays. */
    private static byte[] bytes(ByteBuffer in) {
        byte[] b = new byte[in.remaining()];
        in.get(b);
        return b;
    }

    private static void advance(ByteBuffer out, byte[] dst, int n) {
        if (out.hasArray()) {
            out.position(out.position() + n);
        } else {
            out.put(dst, 0, n);
        }
    }
}
