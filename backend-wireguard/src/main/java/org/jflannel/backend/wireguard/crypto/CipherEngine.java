package org.jflannel.backend.wireguard.crypto;

import java.security.GeneralSecurityException;
import java.security.InvalidKeyException;
import java.util.Arrays;
import javax.crypto.AEADBadTagException;
import javax.crypto.Cipher;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * ChaCha20-Poly1305 through the JDK's public {@link Cipher} API: works on every JDK 11+, and is the
 * fallback when {@link IntrinsicEngine} cannot run. Its cost at 1,420 bytes is mostly the
 * per-message {@code Cipher.init} (a new Poly1305 and a whole keystream chunk for its key,
 * ≈ 2.3 KB of garbage); what is saved here is around it: one {@link Cipher} per thread, the key's
 * {@link SecretKeySpec} kept while the key's bytes stay the same, byte arrays in and out.
 */
final class CipherEngine implements AeadEngine {
    private final Cipher cipher;
    private final byte[] nonce = new byte[12];
    /** The last key's spec, and the array and bytes it was made from (a wiped or reused array has other bytes). */
    private byte[] specFrom;
    private final byte[] specBytes = new byte[32];
    private SecretKeySpec spec;

    CipherEngine() {
        try {
            cipher = Cipher.getInstance("ChaCha20-Poly1305");
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("ChaCha20-Poly1305 unavailable in this JDK", e);
        }
    }

    @Override
    public String name() {
        return "jdk-cipher";
    }

    @Override
    public int seal(byte[] key, int fixed, long counter, byte[] in, int off, int len, byte[] aad, byte[] out, int outOff) {
        try {
            init(Cipher.ENCRYPT_MODE, key, fixed, counter, aad);
            return cipher.doFinal(in, off, len, out, outOff);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("chacha20-poly1305 seal", e);
        }
    }

    @Override
    public int open(byte[] key, int fixed, long counter, byte[] in, int off, int len, byte[] aad, byte[] out, int outOff) {
        try {
            init(Cipher.DECRYPT_MODE, key, fixed, counter, aad);
            return cipher.doFinal(in, off, len, out, outOff);
        } catch (AEADBadTagException e) {
            return -1;
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("chacha20-poly1305 open", e);
        }
    }

    private void init(int mode, byte[] key, int fixed, long counter, byte[] aad) throws GeneralSecurityException {
        for (int i = 0; i < 4; i++) {
            nonce[i] = (byte) (fixed >>> (8 * i));
        }
        for (int i = 0; i < 8; i++) {
            nonce[4 + i] = (byte) (counter >>> (8 * i));
        }
        SecretKeySpec k = keySpec(key);
        try {
            cipher.init(mode, k, new IvParameterSpec(nonce));
        } catch (InvalidKeyException e) {
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
