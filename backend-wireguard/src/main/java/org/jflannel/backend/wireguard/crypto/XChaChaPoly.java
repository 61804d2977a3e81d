package org.jflannel.backend.wireguard.crypto;

import java.util.Optional;

/**
 * XChaCha20-Poly1305 (draft-irtf-cfrg-xchacha): HChaCha20 turns the key and the first 16 bytes of
 * the 24-byte nonce into a subkey, then ChaCha20-Poly1305 runs with the nonce's last 8 bytes.
 * WireGuard seals its cookie replies with it; the JDK has no XChaCha, so HChaCha20 (one ChaCha
 * block function without the final addition) is here.
 */
public final class XChaChaPoly {
    private final ChaChaPoly aead = new ChaChaPoly();

    public byte[] seal(byte[] key, byte[] nonce24, byte[] plain, byte[] aad) {
        return aead.seal(hchacha20(key, nonce24), counter(nonce24), plain, aad);
    }

    public Optional<byte[]> open(byte[] key, byte[] nonce24, byte[] sealed, byte[] aad) {
        return aead.open(hchacha20(key, nonce24), counter(nonce24), sealed, aad);
    }

    /** The last 8 nonce bytes as ChaChaPoly's little-endian counter (after 4 zero bytes). */
    private static long counter(byte[] nonce24) {
        long c = 0;
        for (int i = 0; i < 8; i++) {
            c |= (nonce24[16 + i] & 0xffL) << (8 * i);
        }
        return c;
    }

    public static byte[] hchacha20(byte[] key, byte[] nonce) {
        int[] s = new int[16];
        s[0] = 0x61707865;
        s[1] = 0x3320646e;
        s[2] = 0x79622d32;
        s[3] = 0x6b206574;
        for (int i = 0; i < 8; i++) {
            s[4 + i] = le(key, 4 * i);
        }
        for (int i = 0; i < 4; i++) {
            s[12 + i] = le(nonce, 4 * i);
        }
        for (int r = 0; r < 10; r++) {
            qr(s, 0, 4, 8, 12);
            qr(s, 1, 5, 9, 13);
            qr(s, 2, 6, 10, 14);
            qr(s, 3, 7, 11, 15);
            qr(s, 0, 5, 10, 15);
            qr(s, 1, 6, 11, 12);
            qr(s, 2, 7, 8, 13);
            qr(s, 3, 4, 9, 14);
        }
        byte[] out = new byte[32];
        int[] words = {s[0], s[1], s[2], s[3], s[12], s[13], s[14], s[15]};
        for (int i = 0; i < 8; i++) {
            for (int b = 0; b < 4; b++) {
                out[4 * i + b] = (byte) (words[i] >>> (8 * b));
            }
        }
        return out;
    }

    private static void qr(int[] s, int a, int b, int c, int d) {
        s[a] += s[b];
        s[d] = Integer.rotateLeft(s[d] ^ s[a], 16);
        s[c] += s[d];
        s[b] = Integer.rotateLeft(s[b] ^ s[c], 12);
        s[a] += s[b];
        s[d] = Integer.rotateLeft(s[d] ^ s[a], 8);
        s[c] += s[d];
        s[b] = Integer.rotateLeft(s[b] ^ s[c], 7);
    }

    private static int le(byte[] b, int off) {
        return (b[off] & 0xff) | (b[off + 1] & 0xff) << 8 | (b[off + 2] & 0xff) << 16 | (b[off + 3] & 0xff) << 24;
    }
}
