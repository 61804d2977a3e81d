package org.jflannel.backend.wireguard.crypto;

import java.util.Arrays;

/**
 * HMAC-BLAKE2s (RFC 2104 over BLAKE2s-256, 64-byte block) and the HKDF of the Noise framework
 * that WireGuard derives its chaining keys and session keys with: {@code τ0 = HMAC(key, input)},
 * {@code τ1 = HMAC(τ0, 0x1)}, {@code τi = HMAC(τ0, τ(i-1) ‖ i)}.
 */
public final class Kdf {
    private Kdf() {
    }

    public static byte[] hmac(byte[] key, byte[]... data) {
        byte[] k = key.length > Blake2s.BLOCK ? Blake2s.hash(key) : key;
        byte[] ipad = new byte[Blake2s.BLOCK];
        byte[] opad = new byte[Blake2s.BLOCK];
        for (int i = 0; i < Blake2s.BLOCK; i++) {
            byte b = i < k.length ? k[i] : 0;
            ipad[i] = (byte) (b ^ 0x36);
            opad[i] = (byte) (b ^ 0x5c);
        }
        Blake2s inner = new Blake2s(32).update(ipad);
        for (byte[] d : data) {
            inner.update(d);
        }
        byte[] innerHash = inner.digest();
        byte[] out = new Blake2s(32).update(opad).update(innerHash).digest();
        Arrays.fill(ipad, (byte) 0);
        Arrays.fill(opad, (byte) 0);
        return out;
    }

    /** KDF_n(key, input): {@code n} (1..3) 32-byte outputs. */
    public static byte[][] kdf(int n, byte[] key, byte[] input) {
        if (n < 1 || n > 3) {
            throw new IllegalArgumentException("kdf outputs: expected 1..3, got " + n);
        }
        byte[] prk = hmac(key, input);
        byte[][] out = new byte[n][];
        byte[] prev = new byte[0];
        for (int i = 0; i < n; i++) {
            prev = hmac(prk, prev, new byte[] {(byte) (i + 1)});
            out[i] = prev;
        }
        Arrays.fill(prk, (byte) 0);
        return out;
    }
}
