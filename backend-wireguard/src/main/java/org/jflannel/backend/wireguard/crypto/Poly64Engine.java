package org.jflannel.backend.wireguard.crypto;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Objects;

/**
 * ChaCha20-Poly1305 (RFC 8439 §2.8) from the JDK's intrinsified ChaCha20 block function
 * ({@link ChaCha20Stream}) and our radix-2^64 Poly1305 ({@link Poly1305x64}): the engine for CPUs
 * where the JDK has no Poly1305 intrinsic (AVX2 without IFMA), where the JDK's own Poly1305 is its
 * generic field arithmetic. The same message layout as {@link IntrinsicEngine}: one keystream call
 * gives the Poly1305 key (block 0) and the first data blocks; whole ciphertext blocks go to Poly1305
 * where they lie, a last partial block with its padding and the lengths block through a small
 * buffer. Nothing is allocated per message. Only constructed when {@link JdkInternals#UNAVAILABLE}
 * is null; {@link AeadPaths} checks it against RFC 8439's vector and the JDK cipher before choosing it.
 */
final class Poly64Engine implements AeadEngine {
    static final String NAME = "jdk-chacha20-poly64";
    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final int TAG = 16;

    private final ChaCha20Stream chacha = new ChaCha20Stream();
    private final Poly1305x64 poly = new Poly1305x64();
    /** The last partial block of AAD or ciphertext, padded, and the lengths block. */
    private final byte[] last = new byte[32];
    private final byte[] tag = new byte[TAG];

    @Override
    public String name() {
        return NAME;
    }

    @Override
    public int seal(byte[] key, int fixed, long counter, byte[] in, int off, int len, byte[] aad, byte[] out, int outOff) {
        Objects.checkFromIndexSize(off, len, in.length);
        Objects.checkFromIndexSize(outOff, len + TAG, out.length);
        if (in == out && outOff > off && outOff < off + len) {
            in = Arrays.copyOfRange(in, off, off + len); // overlapping forwards: the xor would read what it wrote
            off = 0;
        }
        start(key, fixed, counter, aad);
        chacha.crypt(in, off, len, out, outOff, 64);
        authenticate(out, outOff, len, aadLength(aad));
        System.arraycopy(tag, 0, out, outOff + len, TAG);
        return len + TAG;
    }

    @Override
    public int open(byte[] key, int fixed, long counter, byte[] in, int off, int len, byte[] aad, byte[] out, int outOff) {
        if (len < TAG) {
            return -1;
        }
        int n = len - TAG;
        Objects.checkFromIndexSize(off, len, in.length);
        Objects.checkFromIndexSize(outOff, n, out.length);
        start(key, fixed, counter, aad);
        authenticate(in, off, n, aadLength(aad));
        if (!tagEquals(in, off + n)) {
            return -1; // nothing decrypted: no unauthenticated plaintext
        }
        if (in == out && outOff > off && outOff < off + n) {
            in = Arrays.copyOfRange(in, off, off + n);
            off = 0;
        }
        chacha.crypt(in, off, n, out, outOff, 64);
        return n;
    }

    /** Keystream bytes the block function's last call wrote (1,024 with AVX-512, 256 with AVX2, 64 from the Java code). */
    int lastKeystreamBytes() {
        return chacha.lastKeystreamBytes();
    }

    /** Key and nonce into the state, block 0 computed: its first 32 bytes key Poly1305, which then takes the AAD (padded). */
    private void start(byte[] key, int fixed, long counter, byte[] aad) {
        chacha.start(key, fixed, counter, 0);
        chacha.next();
        poly.key(chacha.keystream(), 0);
        if (aad != null && aad.length > 0) {
            int whole = aad.length & ~15;
            poly.blocks(aad, 0, whole);
            int rest = aad.length - whole;
            if (rest > 0) {
                System.arraycopy(aad, whole, last, 0, rest);
                Arrays.fill(last, rest, 16, (byte) 0);
                poly.blocks(last, 0, 16);
            }
        }
    }

    /** Poly1305 over the ciphertext, its padding and the lengths block; the tag left in {@link #tag}. */
    private void authenticate(byte[] ct, int off, int len, long aadLength) {
        int whole = len & ~15;
        poly.blocks(ct, off, whole);
        int rest = len - whole;
        int n = 16;
        if (rest > 0) {
            System.arraycopy(ct, off + whole, last, 0, rest);
            Arrays.fill(last, rest, 16, (byte) 0);
            n = 32;
        }
        LONGS.set(last, n - 16, aadLength);
        LONGS.set(last, n - 8, (long) len);
        poly.blocks(last, 0, n);
        poly.tag(tag, 0);
    }

    private static long aadLength(byte[] aad) {
        return aad == null ? 0 : aad.length;
    }

    /** Constant time: how many bytes differ is not visible in the time taken. */
    private boolean tagEquals(byte[] in, int at) {
        int diff = 0;
        for (int i = 0; i < TAG; i++) {
            diff |= tag[i] ^ in[at + i];
        }
        return diff == 0;
    }
}
