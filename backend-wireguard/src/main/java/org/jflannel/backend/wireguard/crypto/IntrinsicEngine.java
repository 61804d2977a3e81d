package org.jflannel.backend.wireguard.crypto;

import static org.jflannel.backend.wireguard.crypto.JdkInternals.POLY_UPDATE;

import java.lang.invoke.MethodHandles;
import java.math.BigInteger;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.Objects;
import javax.crypto.SecretKey;

/**
 * ChaCha20-Poly1305 (RFC 8439 §2.8) built from the JDK's intrinsified ChaCha20 block function and
 * Poly1305 engine ({@link JdkInternals}), without the public cipher's per-message set-up:
 * <ul>
 * <li>one keystream call gives the Poly1305 key (block 0) and the first data blocks (1…15 with
 *     AVX-512) together, where {@code Cipher.init} computes a whole chunk for the key alone and
 *     then the data's from block 1 (at 1,420 bytes: 2 calls of the 16-block intrinsic instead of 3);
 * <li>one Poly1305 engine per instance, keyed per message by writing its multiplier's limbs and
 *     zeroing its accumulator's in place (the JDK makes three new field elements per message), fed
 *     through its own {@code engineUpdate} (whose bulk loop is the AVX-512 IFMA intrinsic), and
 *     finished here from the accumulator's limbs (the JDK's final allocates a few hundred bytes);
 * <li>the state, keystream and tag buffers are this instance's: nothing is allocated per message.
 * </ul>
 * Only constructed when {@link JdkInternals#UNAVAILABLE} is null; {@link AeadPaths} checks it
 * against RFC 8439's vector and the JDK cipher before choosing it.
 */
final class IntrinsicEngine implements AeadEngine {
    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final byte[] ZEROS = new byte[16];
    private static final long M26 = (1L << 26) - 1;
    static final int TAG = 16;

    /** The keystream, its xor with the data, and their buffers. */
    private final ChaCha20Stream chacha = new ChaCha20Stream();
    private final Object poly;
    /** The Poly1305 engine's accumulator and multiplier limbs (radix 2^26, five), written here per message. */
    private final long[] acc;
    private final long[] mul;
    /** The one-time key's s half, little endian. */
    private long s0;
    private long s1;
    /** The last partial ciphertext block, padded, and the lengths block. */
    private final byte[] last = new byte[32];
    private final byte[] tag = new byte[TAG];

    IntrinsicEngine() {
        try {
            poly = (Object) JdkInternals.POLY_NEW.invokeExact(false);
            // one init with any key makes the engine's elements; from then on their limbs are ours to set
            PolyKey any = new PolyKey();
            Arrays.fill(any.bytes, (byte) 1);
            JdkInternals.POLY_INIT.invokeExact(poly, (java.security.Key) any, (java.security.spec.AlgorithmParameterSpec) null);
            acc = (long[]) JdkInternals.LIMBS.invokeExact((Object) JdkInternals.POLY_ACCUMULATOR.invokeExact(poly));
            mul = (long[]) JdkInternals.LIMBS.invokeExact((Object) JdkInternals.POLY_MULTIPLIER.invokeExact(poly));
        } catch (Throwable e) {
            throw new IllegalStateException("poly1305 engine", e);
        }
        if (acc.length != 5 || mul.length != 5) {
            throw new IllegalStateException("poly1305 engine: expected 5 limbs, got " + acc.length + " and " + mul.length);
        }
    }

    @Override
    public String name() {
        return "jdk-intrinsics";
    }

    @Override
    public int seal(byte[] key, int fixed, long counter, byte[] in, int off, int len, byte[] aad, byte[] out, int outOff) {
        Objects.checkFromIndexSize(off, len, in.length);
        Objects.checkFromIndexSize(outOff, len + TAG, out.length);
        if (in == out && outOff > off && outOff < off + len) {
            in = Arrays.copyOfRange(in, off, off + len); // overlapping forwards: the xor would read what it wrote
            off = 0;
        }
        int ksAt = start(key, fixed, counter, aad);
        chacha.crypt(in, off, len, out, outOff, ksAt);
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
        int ksAt = start(key, fixed, counter, aad);
        authenticate(in, off, n, aadLength(aad));
        if (!tagEquals(in, off + n)) {
            return -1; // nothing decrypted: no unauthenticated plaintext
        }
        if (in == out && outOff > off && outOff < off + n) {
            in = Arrays.copyOfRange(in, off, off + n);
            off = 0;
        }
        chacha.crypt(in, off, n, out, outOff, ksAt);
        return n;
    }

    /** RFC 8439 §2.4's ChaCha20 alone, from block {@code firstBlock} (for its §2.4.2 vector). */
    void chacha20(byte[] key, int fixed, long nonce, int firstBlock, byte[] in, int off, int len, byte[] out, int outOff) {
        chacha.start(key, fixed, nonce, firstBlock);
        chacha.crypt(in, off, len, out, outOff, 0);
    }

    /**
     * RFC 8439 §2.5's Poly1305 alone, of a message under a one-time key (for its §2.5.2 vector): the
     * whole blocks through the engine as the AEAD feeds them, a last partial block (the AEAD never
     * has one: it pads) and the final addition in {@link BigInteger} arithmetic, for the test only.
     */
    byte[] poly1305(byte[] oneTimeKey, byte[] msg) {
        polyKey(oneTimeKey, 0);
        int whole = msg.length & ~15;
        polyUpdate(msg, 0, whole);
        if (whole == msg.length) {
            tag();
            return tag.clone();
        }
        BigInteger p = BigInteger.ONE.shiftLeft(130).subtract(BigInteger.valueOf(5));
        BigInteger h = BigInteger.ZERO;
        BigInteger r = BigInteger.ZERO;
        for (int i = 4; i >= 0; i--) {
            h = h.shiftLeft(26).add(BigInteger.valueOf(acc[i]));
            r = r.shiftLeft(26).add(BigInteger.valueOf(mul[i]));
        }
        byte[] last = new byte[17];
        int k = msg.length - whole;
        for (int i = 0; i < k; i++) {
            last[16 - i] = msg[whole + i]; // big endian for BigInteger
        }
        last[16 - k] = 1;
        h = h.add(new BigInteger(1, last)).multiply(r).mod(p);
        BigInteger s = new BigInteger(1, new byte[] {
            (byte) (s1 >>> 56), (byte) (s1 >>> 48), (byte) (s1 >>> 40), (byte) (s1 >>> 32), (byte) (s1 >>> 24), (byte) (s1 >>> 16), (byte) (s1 >>> 8), (byte) s1,
            (byte) (s0 >>> 56), (byte) (s0 >>> 48), (byte) (s0 >>> 40), (byte) (s0 >>> 32), (byte) (s0 >>> 24), (byte) (s0 >>> 16), (byte) (s0 >>> 8), (byte) s0});
        byte[] be = h.add(s).toByteArray();
        byte[] out = new byte[16];
        for (int i = 0; i < 16 && i < be.length; i++) {
            out[i] = be[be.length - 1 - i];
        }
        return out;
    }

    /** Keystream bytes the block function's last call wrote: 1,024 when C2 applied the AVX-512 intrinsic, 64 from the Java code (the benchmark shows it). */
    int lastKeystreamBytes() {
        return chacha.lastKeystreamBytes();
    }

    /** Key and nonce into the state, block 0 computed: its first 32 bytes key Poly1305, which then takes the AAD. Returns where the data's keystream starts. */
    private int start(byte[] key, int fixed, long counter, byte[] aad) {
        chacha.start(key, fixed, counter, 0);
        chacha.next();
        polyKey(chacha.keystream(), 0);
        if (aad != null && aad.length > 0) {
            polyUpdate(aad, 0, aad.length);
            pad16(aad.length);
        }
        return 64;
    }

    /** Keys the engine with the one-time key at {@code k[at, at + 32)}: r clamped into the multiplier's limbs, the accumulator zeroed, s kept. */
    private void polyKey(byte[] k, int at) {
        long r0 = (long) LONGS.get(k, at) & 0x0ffffffc0fffffffL;
        long r1 = (long) LONGS.get(k, at + 8) & 0x0ffffffc0ffffffcL;
        mul[0] = r0 & M26;
        mul[1] = (r0 >>> 26) & M26;
        mul[2] = ((r0 >>> 52) | (r1 << 12)) & M26;
        mul[3] = (r1 >>> 14) & M26;
        mul[4] = r1 >>> 40;
        Arrays.fill(acc, 0);
        s0 = (long) LONGS.get(k, at + 16);
        s1 = (long) LONGS.get(k, at + 24);
    }

    private void pad16(long length) {
        int rest = (int) (length & 15);
        if (rest != 0) {
            polyUpdate(ZEROS, 0, 16 - rest);
        }
    }

    /**
     * Poly1305 over the ciphertext, its padding and the lengths block, the tag left in {@link #tag}.
     * The whole blocks go straight from the ciphertext to the engine; a last partial block is copied
     * with its zero padding and the lengths into {@link #last}, so that it too goes through the
     * engine's bulk (intrinsic) loop: fed alone it would take the engine's Java path for one block.
     */
    private void authenticate(byte[] ct, int off, int len, long aadLength) {
        int whole = len & ~15;
        if (whole > 0) {
            polyUpdate(ct, off, whole);
        }
        int rest = len - whole;
        int n = 16;
        if (rest > 0) {
            System.arraycopy(ct, off + whole, last, 0, rest);
            Arrays.fill(last, rest, 16, (byte) 0);
            n = 32;
        }
        LONGS.set(last, n - 16, aadLength);
        LONGS.set(last, n - 8, (long) len);
        polyUpdate(last, 0, n);
        tag();
    }

    /**
     * The tag from the accumulator (every block fed, none left in the engine's buffer): its limbs
     * carried into [0, 2^26) each (they may be above or below after the engine's lazy reduction),
     * reduced modulo 2^130 - 5, plus s, modulo 2^128.
     */
    private void tag() {
        long h0 = acc[0];
        long h1 = acc[1];
        long h2 = acc[2];
        long h3 = acc[3];
        long h4 = acc[4];
        // carry passes until the top limb carries nothing back: then every limb is in [0, 2^26)
        // (magnitudes shrink by 2^26 a pass: a few passes, bounded anyway)
        for (int pass = 0; pass < 8; pass++) {
            long c;
            c = h0 >> 26; h0 -= c << 26; h1 += c;
            c = h1 >> 26; h1 -= c << 26; h2 += c;
            c = h2 >> 26; h2 -= c << 26; h3 += c;
            c = h3 >> 26; h3 -= c << 26; h4 += c;
            c = h4 >> 26; h4 -= c << 26;
            if (c == 0) {
                break;
            }
            h0 += c * 5; // 2^130 = 5 modulo p
        }
        long c;
        // now 0 <= h < 2^130 in 26-bit limbs; h - p = h + 5 - 2^130 when that is not negative
        long g0 = h0 + 5;
        c = g0 >> 26; g0 &= M26;
        long g1 = h1 + c;
        c = g1 >> 26; g1 &= M26;
        long g2 = h2 + c;
        c = g2 >> 26; g2 &= M26;
        long g3 = h3 + c;
        c = g3 >> 26; g3 &= M26;
        long g4 = h4 + c;
        if ((g4 >> 26) != 0) {
            h0 = g0; h1 = g1; h2 = g2; h3 = g3; h4 = g4 & M26;
        }
        long lo = h0 | (h1 << 26) | (h2 << 52);
        long hi = (h2 >>> 12) | (h3 << 14) | (h4 << 40);
        long t0 = lo + s0;
        long carry = Long.compareUnsigned(t0, lo) < 0 ? 1 : 0;
        long t1 = hi + s1 + carry;
        LONGS.set(tag, 0, t0);
        LONGS.set(tag, 8, t1);
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

    private void polyUpdate(byte[] in, int off, int len) {
        try {
            POLY_UPDATE.invokeExact(poly, in, off, len);
        } catch (Throwable e) {
            throw new IllegalStateException("poly1305 update", e);
        }
    }

    /** A key for the engine's one init at construction (its encoded form is this array, not a copy). */
    @SuppressWarnings("serial")
    private static final class PolyKey implements SecretKey {
        final byte[] bytes = new byte[32];

        @Override
        public String getAlgorithm() {
            return "Poly1305";
        }

        @Override
        public String getFormat() {
            return "RAW";
        }

        @Override
        public byte[] getEncoded() {
            return bytes;
        }
    }
}
