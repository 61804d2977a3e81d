package org.jflannel.backend.wireguard.crypto;

import java.nio.ByteBuffer;
import java.security.GeneralSecurityException;
import java.util.Arrays;
import java.util.Optional;
import javax.crypto.AEADBadTagException;
import javax.crypto.Cipher;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * ChaCha20-Poly1305 (RFC 8439) with WireGuard's nonce (32 zero bits, then the 64-bit counter little
 * endian), through the JDK's cipher (intrinsics on Temurin 21+ for x86-64 AVX2/AVX-512 and
 * aarch64). One instance per thread: a {@link Cipher} is not thread-safe. A failed tag is an empty
 * result, never an exception for the caller to forget.
 *
 * <p>Cost (bench/ChaChaPolyBench, docs/benchmarks.md): the JDK's API needs a {@code Cipher.init} per
 * message, and each init builds a new Poly1305 and computes a whole keystream chunk for its key, so
 * at 1,420 bytes the set-up costs more than the data. What is ours to save is around it: one
 * {@link Cipher} per thread (never {@code getInstance} per message), the key's {@link SecretKeySpec}
 * kept while the session key stays the same, and byte arrays in and out (a direct
 * {@link ByteBuffer} makes the JDK copy the message into a new array and back). Sealing and opening
 * in place ({@code in == out}, same offset) is allowed: the data plane does it.
 */
public final class ChaChaPoly {
    public static final int TAG = 16;
    private final Cipher cipher;
    private final byte[] nonce = new byte[12];
    /** The last key's spec, and the array and bytes it was made from (a wiped or reused array has other bytes). */
    private byte[] specFrom;
    private final byte[] specBytes = new byte[32];
    private SecretKeySpec spec;

    public ChaChaPoly() {
        try {
            cipher = Cipher.getInstance("ChaCha20-Poly1305");
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("ChaCha20-Poly1305 unavailable in this JDK", e);
        }
    }

    public byte[] seal(byte[] key, long counter, byte[] plain, byte[] aad) {
        try {
            init(Cipher.ENCRYPT_MODE, key, counter, aad);
            return cipher.doFinal(plain);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("chacha20-poly1305 seal", e);
        }
    }

    public Optional<byte[]> open(byte[] key, long counter, byte[] sealed, byte[] aad) {
        try {
            init(Cipher.DECRYPT_MODE, key, counter, aad);
            return Optional.of(cipher.doFinal(sealed));
        } catch (AEADBadTagException e) {
            return Optional.empty();
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("chacha20-poly1305 open", e);
        }
    }

    /** Seals {@code in}'s remaining bytes into {@code out} at its position (no AAD: transport data). Returns bytes written. */
    public int seal(byte[] key, long counter, ByteBuffer in, ByteBuffer out) {
        try {
            init(Cipher.ENCRYPT_MODE, key, counter, null);
            return cipher.doFinal(in, out);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("chacha20-poly1305 seal", e);
        }
    }

    /** Opens {@code in}'s remaining bytes into {@code out}; -1 when the tag fails (nothing usable written). */
    public int open(byte[] key, long counter, ByteBuffer in, ByteBuffer out) {
        try {
            init(Cipher.DECRYPT_MODE, key, counter, null);
            return cipher.doFinal(in, out);
        } catch (AEADBadTagException e) {
            return -1;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("chacha20-poly1305 open", e);
        }
    }

    /** Seals {@code in[off, off + len)} into {@code out} at {@code outOff} (no AAD: transport data). Returns bytes written. */
    public int seal(byte[] key, long counter, byte[] in, int off, int len, byte[] out, int outOff) {
        try {
            init(Cipher.ENCRYPT_MODE, key, counter, null);
            return cipher.doFinal(in, off, len, out, outOff);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("chacha20-poly1305 seal", e);
        }
    }

    /** Opens {@code in[off, off + len)} into {@code out} at {@code outOff}; -1 when the tag fails. */
    public int open(byte[] key, long counter, byte[] in, int off, int len, byte[] out, int outOff) {
        try {
            init(Cipher.DECRYPT_MODE, key, counter, null);
            return cipher.doFinal(in, off, len, out, outOff);
        } catch (AEADBadTagException e) {
            return -1;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("chacha20-poly1305 open", e);
        }
    }

    private void init(int mode, byte[] key, long counter, byte[] aad) throws GeneralSecurityException {
        for (int i = 0; i < 8; i++) {
            nonce[4 + i] = (byte) (counter >>> (8 * i));
        }
        SecretKeySpec k = keySpec(key);
        try {
            cipher.init(mode, k, new IvParameterSpec(nonce));
        } catch (java.security.InvalidKeyException e) {
            // the JDK refuses two inits in a row with one key and nonce (against nonce reuse when
            // encrypting); a decrypt after an encrypt of the same message, or a test, hits it:
            // re-initialise through another nonce first
            byte[] other = nonce.clone();
            other[0] ^= 1;
            cipher.init(mode, k, new IvParameterSpec(other));
            cipher.init(mode, k, new IvParameterSpec(nonce));
        }
        if (aad != null && aad.length > 0) {
            cipher.updateAAD(aad);
        }
    }

    /** The spec of {@code key}: the last one when the array and its bytes are the same (one session's key, packet after packet). */
    private SecretKeySpec keySpec(byte[] key) {
        if (key != specFrom || !Arrays.equals(key, specBytes)) {
            spec = new SecretKeySpec(key, "ChaCha20");
            System.arraycopy(key, 0, specBytes, 0, Math.min(key.length, specBytes.length));
            specFrom = key.length == specBytes.length ? key : null;
        }
        return spec;
    }
}
