package org.jflannel.backend.wireguard.crypto;

import java.util.Arrays;

/**
 * BLAKE2s (RFC 7693), unkeyed or keyed, 1..32 bytes of output. The JDK has no BLAKE2; WireGuard
 * hashes with it (HASH, MAC, and HMAC inside its KDF). Written here rather than taken from a
 * library because it is 120 lines and the daemon's image stays free of a 9 MB provider jar; the
 * RFC's and the reference implementation's vectors test it. Not thread-safe; reusable after
 * {@link #digest}.
 */
public final class Blake2s {
    private static final int[] IV = {
        0x6A09E667, 0xBB67AE85, 0x3C6EF372, 0xA54FF53A, 0x510E527F, 0x9B05688C, 0x1F83D9AB, 0x5BE0CD19};
    private static final byte[][] SIGMA = {
        {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15},
        {14, 10, 4, 8, 9, 15, 13, 6, 1, 12, 0, 2, 11, 7, 5, 3},
        {11, 8, 12, 0, 5, 2, 15, 13, 10, 14, 3, 6, 7, 1, 9, 4},
        {7, 9, 3, 1, 13, 12, 11, 14, 2, 6, 5, 10, 4, 0, 15, 8},
        {9, 0, 5, 7, 2, 4, 10, 15, 14, 1, 11, 12, 6, 8, 3, 13},
        {2, 12, 6, 10, 0, 11, 8, 3, 4, 13, 7, 5, 15, 14, 1, 9},
        {12, 5, 1, 15, 14, 13, 4, 10, 0, 7, 6, 3, 9, 2, 8, 11},
        {13, 11, 7, 14, 12, 1, 3, 9, 5, 0, 15, 4, 8, 6, 2, 10},
        {6, 15, 14, 9, 11, 3, 0, 8, 12, 2, 13, 7, 1, 4, 10, 5},
        {10, 2, 8, 4, 7, 6, 1, 5, 15, 11, 9, 14, 3, 12, 13, 0}};
    public static final int BLOCK = 64;

    private final int[] h = new int[8];
    private final int[] v = new int[16];
    private final int[] m = new int[16];
    private final byte[] buf = new byte[BLOCK];
    private final int outLen;
    private final byte[] key;
    private int bufLen;
    private long counter;

    /** Unkeyed, {@code outLen} bytes. */
    public Blake2s(int outLen) {
        this(outLen, null);
    }

    /** Keyed with up to 32 bytes ({@code null} or empty: unkeyed), {@code outLen} (1..32) bytes. */
    public Blake2s(int outLen, byte[] key) {
        if (outLen < 1 || outLen > 32) {
            throw new IllegalArgumentException("blake2s output: expected 1..32 bytes, got " + outLen);
        }
        if (key != null && key.length > 32) {
            throw new IllegalArgumentException("blake2s key: expected at most 32 bytes, got " + key.length);
        }
        this.outLen = outLen;
        this.key = key == null || key.length == 0 ? null : key.clone();
        reset();
    }

    public void reset() {
        System.arraycopy(IV, 0, h, 0, 8);
        h[0] ^= 0x01010000 ^ ((key == null ? 0 : key.length) << 8) ^ outLen;
        counter = 0;
        bufLen = 0;
        Arrays.fill(buf, (byte) 0);
        if (key != null) {
            System.arraycopy(key, 0, buf, 0, key.length);
            bufLen = BLOCK;
        }
    }

    public Blake2s update(byte[] in) {
        return update(in, 0, in.length);
    }

    public Blake2s update(byte[] in, int off, int len) {
        while (len > 0) {
            if (bufLen == BLOCK) {
                // a full buffered block is compressed only once more input follows: the last block is special
                counter += BLOCK;
                compress(buf, 0, false);
                bufLen = 0;
            }
            int n = Math.min(len, BLOCK - bufLen);
            System.arraycopy(in, off, buf, bufLen, n);
            bufLen += n;
            off += n;
            len -= n;
        }
        return this;
    }

    /** Finishes into {@code out[off, off + outLen)} and resets. */
    public void digest(byte[] out, int off) {
        counter += bufLen;
        Arrays.fill(buf, bufLen, BLOCK, (byte) 0);
        compress(buf, 0, true);
        for (int i = 0; i < outLen; i++) {
            out[off + i] = (byte) (h[i >>> 2] >>> (8 * (i & 3)));
        }
        reset();
    }

    public byte[] digest() {
        byte[] out = new byte[outLen];
        digest(out, 0);
        return out;
    }

    private void compress(byte[] block, int off, boolean last) {
        for (int i = 0; i < 16; i++) {
            int j = off + 4 * i;
            m[i] = (block[j] & 0xff) | (block[j + 1] & 0xff) << 8 | (block[j + 2] & 0xff) << 16 | (block[j + 3] & 0xff) << 24;
        }
        System.arraycopy(h, 0, v, 0, 8);
        System.arraycopy(IV, 0, v, 8, 8);
        v[12] ^= (int) counter;
        v[13] ^= (int) (counter >>> 32);
        if (last) {
            v[14] = ~v[14];
        }
        for (int r = 0; r < 10; r++) {
            byte[] s = SIGMA[r];
            g(0, 4, 8, 12, m[s[0]], m[s[1]]);
            g(1, 5, 9, 13, m[s[2]], m[s[3]]);
            g(2, 6, 10, 14, m[s[4]], m[s[5]]);
            g(3, 7, 11, 15, m[s[6]], m[s[7]]);
            g(0, 5, 10, 15, m[s[8]], m[s[9]]);
            g(1, 6, 11, 12, m[s[10]], m[s[11]]);
            g(2, 7, 8, 13, m[s[12]], m[s[13]]);
            g(3, 4, 9, 14, m[s[14]], m[s[15]]);
        }
        for (int i = 0; i < 8; i++) {
            h[i] ^= v[i] ^ v[i + 8];
        }
    }

    private void g(int a, int b, int c, int d, int x, int y) {
        v[a] += v[b] + x;
        v[d] = Integer.rotateRight(v[d] ^ v[a], 16);
        v[c] += v[d];
        v[b] = Integer.rotateRight(v[b] ^ v[c], 12);
        v[a] += v[b] + y;
        v[d] = Integer.rotateRight(v[d] ^ v[a], 8);
        v[c] += v[d];
        v[b] = Integer.rotateRight(v[b] ^ v[c], 7);
    }

    /** BLAKE2s-256 of the concatenation of {@code parts} (WireGuard's HASH). */
    public static byte[] hash(byte[]... parts) {
        Blake2s b = new Blake2s(32);
        for (byte[] p : parts) {
            b.update(p);
        }
        return b.digest();
    }

    /** Keyed BLAKE2s with 16 bytes of output (WireGuard's MAC). */
    public static byte[] mac(byte[] key, byte[] in, int off, int len) {
        return new Blake2s(16, key).update(in, off, len).digest();
    }
}
