package org.jflannel.backend.wireguard.crypto;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.util.Objects;

/**
 * Poly1305 (RFC 8439 §2.5) in plain Java, radix 2^64, for CPUs where the JDK has no Poly1305
 * intrinsic (no AVX-512 IFMA or AVX-IFMA: AMD Zen 2/3, older Intel; there the JDK's own engine is
 * its generic 26-bit-limb field code, {@code IntegerPolynomial1305}). The accumulator is two 64-bit
 * limbs and a small third ({@code h2}, at most 4 between blocks, so that {@code h < 2p}); the
 * multiplier's two limbs are clamped below 2^60, so every product {@code h_i * r_j} is one
 * 64×64→128-bit multiplication ({@link Math#multiplyHigh}, which C2 compiles to one {@code mul}/{@code imul},
 * plus a correction because {@code h_i} is unsigned) and the reduction uses {@code 2^130 = 5 (mod p)}
 * with {@code s1 = 5 r1 / 4} (r1's low two bits are clamped to zero). Four wide and two narrow
 * multiplications a 16-byte block, where 26-bit limbs need 25.
 *
 * <p>Allocation-free and per instance: {@link #key}, then {@link #blocks} any number of times
 * (whole 16-byte blocks only: the AEAD pads), then {@link #tag}. Not thread-safe.
 */
final class Poly1305x64 {
    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    private long r0;
    private long r1;
    /** {@code 5 * r1 / 4}: r1 times 2^128, reduced modulo p. */
    private long s1;
    private long h0;
    private long h1;
    private long h2;
    /** The one-time key's s half, added at the end. */
    private long pad0;
    private long pad1;

    /** Keys with the one-time key at {@code k[at, at + 32)}: r clamped, the accumulator zeroed. */
    void key(byte[] k, int at) {
        r0 = (long) LONGS.get(k, at) & 0x0ffffffc0fffffffL;
        r1 = (long) LONGS.get(k, at + 8) & 0x0ffffffc0ffffffcL;
        s1 = r1 + (r1 >>> 2);
        h0 = 0;
        h1 = 0;
        h2 = 0;
        pad0 = (long) LONGS.get(k, at + 16);
        pad1 = (long) LONGS.get(k, at + 24);
    }

    /** Absorbs {@code len / 16} whole blocks from {@code in[off, ...)}, each with its 2^128 bit; {@code len} a multiple of 16. */
    void blocks(byte[] in, int off, int len) {
        if ((len & 15) != 0) {
            throw new IllegalArgumentException("poly1305 blocks: length not a multiple of 16: " + len);
        }
        Objects.checkFromIndexSize(off, len, in.length);
        absorb(in, off, len, 1);
    }

    /**
     * RFC 8439 §2.5's last partial block ({@code 0 < len < 16}): the bytes, then a 1 byte, then
     * zeros, without the 2^128 bit. The AEAD never has one (it pads with zeros); for the RFC's
     * Poly1305 vector.
     */
    void lastPartialBlock(byte[] in, int off, int len) {
        if (len <= 0 || len >= 16) {
            throw new IllegalArgumentException("poly1305 partial block: expected 1..15 bytes, got " + len);
        }
        byte[] b = new byte[16];
        System.arraycopy(in, off, b, 0, len);
        b[len] = 1;
        absorb(b, 0, 16, 0);
    }

    /** The block loop: each 16-byte block plus {@code hibit} 2^128. */
    private void absorb(byte[] in, int off, int len, long hibit) {
        final long r0 = this.r0;
        final long r1 = this.r1;
        final long s1 = this.s1;
        long h0 = this.h0;
        long h1 = this.h1;
        long h2 = this.h2;
        for (int end = off + len; off < end; off += 16) {
            long m0 = (long) LONGS.get(in, off);
            long m1 = (long) LONGS.get(in, off + 8);
            // h += m + 2^128
            long t0 = h0 + m0;
            long c = carry(h0, m0, t0);
            long t1 = h1 + m1;
            long c1 = carry(h1, m1, t1);
            h1 = t1 + c;
            c1 += carry(t1, c, h1);
            h0 = t0;
            h2 += c1 + hibit;

            // d0 = h0 r0 + h1 s1; d1 = h0 r1 + h1 r0 + h2 s1; d2 = h2 r0 (each below 2^126, 2^126, 2^63)
            long a = h0 * r0;
            long b = h1 * s1;
            long d0 = a + b;
            long d0h = mulHigh(h0, r0) + mulHigh(h1, s1) + carry(a, b, d0);

            a = h0 * r1;
            b = h1 * r0;
            long d1 = a + b;
            long d1h = mulHigh(h0, r1) + mulHigh(h1, r0) + carry(a, b, d1);
            a = d1;
            b = h2 * s1; // below 2^63: h2 <= 6, s1 < 2^61
            d1 = a + b;
            d1h += carry(a, b, d1);
            a = d1;
            d1 = a + d0h;
            d1h += carry(a, d0h, d1);
            long d2 = h2 * r0 + d1h; // the bits from 2^128 up

            // h = d0 + d1 2^64 + (d2 & 3) 2^128 + (d2 >> 2) 5
            h0 = d0;
            h1 = d1;
            h2 = d2 & 3;
            c = (d2 & ~3L) + (d2 >>> 2);
            t0 = h0 + c;
            c = carry(h0, c, t0);
            h0 = t0;
            t1 = h1 + c;
            c = carry(h1, c, t1);
            h1 = t1;
            h2 += c;
        }
        this.h0 = h0;
        this.h1 = h1;
        this.h2 = h2;
    }

    /** Writes the 16-byte tag to {@code out[at, at + 16)}: h reduced modulo p, plus s, modulo 2^128. */
    void tag(byte[] out, int at) {
        // h < 5 * 2^128 < 2p: one conditional subtraction of p, as h + 5 - 2^130
        long g0 = h0 + 5;
        long c = carry(h0, 5, g0);
        long g1 = h1 + c;
        c = carry(h1, c, g1);
        long g2 = h2 + c;
        long mask = -(g2 >>> 2); // all ones when h >= p
        long f0 = (h0 & ~mask) | (g0 & mask);
        long f1 = (h1 & ~mask) | (g1 & mask);
        long t0 = f0 + pad0;
        long t1 = f1 + pad1 + carry(f0, pad0, t0);
        LONGS.set(out, at, t0);
        LONGS.set(out, at + 8, t1);
    }

    /**
     * The carry out of the unsigned sum {@code s = x + y}: 0 or 1. As an unsigned compare, which C2
     * compiles to cmp and setb: ≈ 1.5× faster over a message than the branch-free bit formula
     * {@code ((x & y) | ((x | y) & ~s)) >>> 63} (1,023 → 662 ns for 1,408 bytes, UseAVX=2, session of issue 40).
     */
    private static long carry(long x, long y, long s) {
        return Long.compareUnsigned(s, x) < 0 ? 1 : 0;
    }

    /** The high 64 bits of the unsigned product of {@code x} (any) and {@code y} (below 2^63). */
    private static long mulHigh(long x, long y) {
        return Math.multiplyHigh(x, y) + ((x >> 63) & y);
    }
}
