import java.lang.invoke.*;
import java.nio.ByteOrder;
import jdk.incubator.vector.*;

/**
 * Issue 40's check of candidate (b), a Vector API Poly1305: 4-way on 256-bit vectors (26-bit limbs in 64-bit lanes,
 * Horner steps by r^4, the lanes finished by r^4..r^1 and summed); whole 4-block groups only. Checked against
 * PB (the branch's Poly1305x64 as it was measured, class renamed, no package) on 3,000 messages, then both timed
 * (thread CPU ns, keyed and over 1,408 bytes). Written as C2 would take it: the lane multiplies on masked operands
 * (the form JDK 24+ turns into vpmuludq), constants masked outside the loop (with the masks inside, the loop
 * body exceeded C2's NodeCountInliningCutoff and the vector calls were not inlined: 8-10 us per message), vector
 * shift counts (an int count failed to intrinsify on AVX2: broadcastInt). Run, on Temurin 25:
 *   javac --add-modules jdk.incubator.vector -d /tmp/vp bench/vector-poly1305/*.java
 *   java -XX:UseAVX=2 --add-modules jdk.incubator.vector -cp /tmp/vp VP
 */
public class VP {
  static final VectorSpecies<Long> S = LongVector.SPECIES_256;
  static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
  static final long M26 = (1L << 26) - 1;
  static final LongVector SH2 = LongVector.broadcast(S, 2);
  static final LongVector SH12 = LongVector.broadcast(S, 12);
  static final LongVector SH14 = LongVector.broadcast(S, 14);
  static final LongVector SH26 = LongVector.broadcast(S, 26);
  static final LongVector SH40 = LongVector.broadcast(S, 40);
  static final LongVector SH52 = LongVector.broadcast(S, 52);
  static final long M32 = 0xffffffffL;
  final long[] r1 = new long[5], r2 = new long[5], r3 = new long[5], r4 = new long[5];
  final long[] rp = new long[20], sp = new long[20];
  long h0, h1, h2, h3, h4; // 26-bit limbs of the accumulator
  long pad0, pad1;
  final long[] tmp = new long[8];
  final long[] hz = new long[20];
  static final VectorShuffle<Long> LO = VectorShuffle.fromValues(S, 0, 2, 4, 6); // from (a, b) concatenated
  static final VectorShuffle<Long> HI = VectorShuffle.fromValues(S, 1, 3, 5, 7);

  static void mul(long[] a, long[] b, long[] out) {
    long s1 = 5 * b[1], s2 = 5 * b[2], s3 = 5 * b[3], s4 = 5 * b[4];
    long d0 = a[0]*b[0] + a[1]*s4 + a[2]*s3 + a[3]*s2 + a[4]*s1;
    long d1 = a[0]*b[1] + a[1]*b[0] + a[2]*s4 + a[3]*s3 + a[4]*s2;
    long d2 = a[0]*b[2] + a[1]*b[1] + a[2]*b[0] + a[3]*s4 + a[4]*s3;
    long d3 = a[0]*b[3] + a[1]*b[2] + a[2]*b[1] + a[3]*b[0] + a[4]*s4;
    long d4 = a[0]*b[4] + a[1]*b[3] + a[2]*b[2] + a[3]*b[1] + a[4]*b[0];
    long c;
    c = d0 >>> 26; d0 &= M26; d1 += c; c = d1 >>> 26; d1 &= M26; d2 += c; c = d2 >>> 26; d2 &= M26; d3 += c;
    c = d3 >>> 26; d3 &= M26; d4 += c; c = d4 >>> 26; d4 &= M26; d0 += c * 5; c = d0 >>> 26; d0 &= M26; d1 += c;
    out[0] = d0; out[1] = d1; out[2] = d2; out[3] = d3; out[4] = d4;
  }

  void key(byte[] k, int at) {
    long lo = (long) LONGS.get(k, at) & 0x0ffffffc0fffffffL, hi = (long) LONGS.get(k, at + 8) & 0x0ffffffc0ffffffcL;
    r1[0] = lo & M26; r1[1] = (lo >>> 26) & M26; r1[2] = ((lo >>> 52) | (hi << 12)) & M26; r1[3] = (hi >>> 14) & M26; r1[4] = hi >>> 40;
    mul(r1, r1, r2); mul(r2, r1, r3); mul(r2, r2, r4);
    for (int i = 0; i < 5; i++) {
      rp[4*i] = r4[i]; rp[4*i+1] = r3[i]; rp[4*i+2] = r2[i]; rp[4*i+3] = r1[i];
      for (int j = 0; j < 4; j++) sp[4*i+j] = 5 * rp[4*i+j];
    }
    h0 = h1 = h2 = h3 = h4 = 0;
    pad0 = (long) LONGS.get(k, at + 16); pad1 = (long) LONGS.get(k, at + 24);
  }

  static LongVector m(LongVector a, LongVector b) { return a.and(M32).mul(b.and(M32)); }

  /** len a multiple of 64 (4 blocks), at least 64. */
  void blocks(byte[] in, int off, int len) {
    LongVector R0 = LongVector.broadcast(S, r4[0]), R1 = LongVector.broadcast(S, r4[1]), R2 = LongVector.broadcast(S, r4[2]), R3 = LongVector.broadcast(S, r4[3]), R4 = LongVector.broadcast(S, r4[4]);
    LongVector S1 = R1.mul(5).and(M32), S2 = R2.mul(5).and(M32), S3 = R3.mul(5).and(M32), S4 = R4.mul(5).and(M32);
    R0 = R0.and(M32); R1 = R1.and(M32); R2 = R2.and(M32); R3 = R3.and(M32); R4 = R4.and(M32);
    LongVector mask = LongVector.broadcast(S, M26);
    // first group, with the accumulator in lane 0
    long[] t = tmp;
    for (int j = 0; j < 4; j++) { t[j] = (long) LONGS.get(in, off + 16 * j); t[4 + j] = (long) LONGS.get(in, off + 16 * j + 8); }
    LongVector lo = LongVector.fromArray(S, t, 0), hi = LongVector.fromArray(S, t, 4);
    LongVector x0 = lo.and(mask), x1 = lo.lanewise(VectorOperators.LSHR, SH26).and(mask), x2 = lo.lanewise(VectorOperators.LSHR, SH52).or(hi.lanewise(VectorOperators.LSHL, SH12)).and(mask);
    LongVector x3 = hi.lanewise(VectorOperators.LSHR, SH14).and(mask), x4 = hi.lanewise(VectorOperators.LSHR, SH40).or(1L << 24);
    LongVector first = LongVector.zero(S);
    long[] hz = this.hz; hz[0] = h0; hz[4] = h1; hz[8] = h2; hz[12] = h3; hz[16] = h4;
    x0 = x0.add(LongVector.fromArray(S, hz, 0)); x1 = x1.add(LongVector.fromArray(S, hz, 4)); x2 = x2.add(LongVector.fromArray(S, hz, 8));
    x3 = x3.add(LongVector.fromArray(S, hz, 12)); x4 = x4.add(LongVector.fromArray(S, hz, 16));
    for (int p = off + 64, end = off + len; p < end; p += 64) {
      LongVector y0 = x0.and(M32), y1 = x1.and(M32), y2 = x2.and(M32), y3 = x3.and(M32), y4 = x4.and(M32);
      LongVector d0 = y0.mul(R0).add(y1.mul(S4)).add(y2.mul(S3)).add(y3.mul(S2)).add(y4.mul(S1));
      LongVector d1 = y0.mul(R1).add(y1.mul(R0)).add(y2.mul(S4)).add(y3.mul(S3)).add(y4.mul(S2));
      LongVector d2 = y0.mul(R2).add(y1.mul(R1)).add(y2.mul(R0)).add(y3.mul(S4)).add(y4.mul(S3));
      LongVector d3 = y0.mul(R3).add(y1.mul(R2)).add(y2.mul(R1)).add(y3.mul(R0)).add(y4.mul(S4));
      LongVector d4 = y0.mul(R4).add(y1.mul(R3)).add(y2.mul(R2)).add(y3.mul(R1)).add(y4.mul(R0));
      LongVector c;
      c = d0.lanewise(VectorOperators.LSHR, SH26); d0 = d0.and(mask); d1 = d1.add(c);
      c = d1.lanewise(VectorOperators.LSHR, SH26); d1 = d1.and(mask); d2 = d2.add(c);
      c = d2.lanewise(VectorOperators.LSHR, SH26); d2 = d2.and(mask); d3 = d3.add(c);
      c = d3.lanewise(VectorOperators.LSHR, SH26); d3 = d3.and(mask); d4 = d4.add(c);
      c = d4.lanewise(VectorOperators.LSHR, SH26); d4 = d4.and(mask); d0 = d0.add(c.add(c.lanewise(VectorOperators.LSHL, SH2)));
      c = d0.lanewise(VectorOperators.LSHR, SH26); d0 = d0.and(mask); d1 = d1.add(c);
      for (int j = 0; j < 4; j++) { t[j] = (long) LONGS.get(in, p + 16 * j); t[4 + j] = (long) LONGS.get(in, p + 16 * j + 8); }
      lo = LongVector.fromArray(S, t, 0); hi = LongVector.fromArray(S, t, 4);
      x0 = d0.add(lo.and(mask)); x1 = d1.add(lo.lanewise(VectorOperators.LSHR, SH26).and(mask));
      x2 = d2.add(lo.lanewise(VectorOperators.LSHR, SH52).or(hi.lanewise(VectorOperators.LSHL, SH12)).and(mask));
      x3 = d3.add(hi.lanewise(VectorOperators.LSHR, SH14).and(mask)); x4 = d4.add(hi.lanewise(VectorOperators.LSHR, SH40).or(1L << 24));
    }
    finish(x0, x1, x2, x3, x4);
  }

  void finish(LongVector x0, LongVector x1, LongVector x2, LongVector x3, LongVector x4) {
    // finish: lane j times r^(4-j), summed
    LongVector P0 = LongVector.fromArray(S, rp, 0), P1 = LongVector.fromArray(S, rp, 4), P2 = LongVector.fromArray(S, rp, 8), P3 = LongVector.fromArray(S, rp, 12), P4 = LongVector.fromArray(S, rp, 16);
    LongVector Q1 = LongVector.fromArray(S, sp, 4), Q2 = LongVector.fromArray(S, sp, 8), Q3 = LongVector.fromArray(S, sp, 12), Q4 = LongVector.fromArray(S, sp, 16);
    long d0 = m(x0, P0).add(m(x1, Q4)).add(m(x2, Q3)).add(m(x3, Q2)).add(m(x4, Q1)).reduceLanes(VectorOperators.ADD);
    long d1 = m(x0, P1).add(m(x1, P0)).add(m(x2, Q4)).add(m(x3, Q3)).add(m(x4, Q2)).reduceLanes(VectorOperators.ADD);
    long d2 = m(x0, P2).add(m(x1, P1)).add(m(x2, P0)).add(m(x3, Q4)).add(m(x4, Q3)).reduceLanes(VectorOperators.ADD);
    long d3 = m(x0, P3).add(m(x1, P2)).add(m(x2, P1)).add(m(x3, P0)).add(m(x4, Q4)).reduceLanes(VectorOperators.ADD);
    long d4 = m(x0, P4).add(m(x1, P3)).add(m(x2, P2)).add(m(x3, P1)).add(m(x4, P0)).reduceLanes(VectorOperators.ADD);
    long c;
    c = d0 >>> 26; d0 &= M26; d1 += c; c = d1 >>> 26; d1 &= M26; d2 += c; c = d2 >>> 26; d2 &= M26; d3 += c;
    c = d3 >>> 26; d3 &= M26; d4 += c; c = d4 >>> 26; d4 &= M26; d0 += c * 5; c = d0 >>> 26; d0 &= M26; d1 += c;
    h0 = d0; h1 = d1; h2 = d2; h3 = d3; h4 = d4;
  }

  void tag(byte[] out, int at) {
    long c;
    long a0 = h0, a1 = h1, a2 = h2, a3 = h3, a4 = h4;
    c = a1 >>> 26; a1 &= M26; a2 += c; c = a2 >>> 26; a2 &= M26; a3 += c; c = a3 >>> 26; a3 &= M26; a4 += c; c = a4 >>> 26; a4 &= M26; a0 += c * 5;
    c = a0 >>> 26; a0 &= M26; a1 += c;
    long g0 = a0 + 5; c = g0 >>> 26; g0 &= M26; long g1 = a1 + c; c = g1 >>> 26; g1 &= M26; long g2 = a2 + c; c = g2 >>> 26; g2 &= M26;
    long g3 = a3 + c; c = g3 >>> 26; g3 &= M26; long g4 = a4 + c - (1L << 26);
    if (g4 >= 0) { a0 = g0; a1 = g1; a2 = g2; a3 = g3; a4 = g4; }
    long lo = a0 | (a1 << 26) | (a2 << 52), hi = (a2 >>> 12) | (a3 << 14) | (a4 << 40);
    long t0 = lo + pad0; long t1 = hi + pad1 + (Long.compareUnsigned(t0, lo) < 0 ? 1 : 0);
    LONGS.set(out, at, t0); LONGS.set(out, at + 8, t1);
  }

  public static void main(String[] args) {
    var rnd = new java.util.SplittableRandom(5);
    byte[] key = new byte[32], msg = new byte[1408], t1 = new byte[16], t2 = new byte[16];
    VP v = new VP(); PB s = new PB();
    int bad = 0;
    for (int i = 0; i < 3000; i++) {
      rnd.nextBytes(key); if (i % 3 == 0) java.util.Arrays.fill(key, 0, 16, (byte) 0xff);
      if (i % 2 == 0) java.util.Arrays.fill(msg, (byte) 0xff); else rnd.nextBytes(msg);
      int n = 64 * (1 + rnd.nextInt(22));
      v.key(key, 0); v.blocks(msg, 0, n); v.tag(t1, 0);
      s.key(key, 0); s.blocks(msg, 0, n); s.tag(t2, 0);
      if (!java.util.Arrays.equals(t1, t2)) bad++;
    }
    System.out.println("mismatches vs scalar radix-2^64: " + bad + " of 3000");
    var bean = (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
    long bv = Long.MAX_VALUE, bs = Long.MAX_VALUE;
    for (int round = 0; round < 30; round++) {
      long t = bean.getCurrentThreadCpuTime();
      for (int i = 0; i < 20000; i++) { v.key(key, 0); v.blocks(msg, 0, 1408); v.tag(t1, 0); key[0] ^= t1[0]; }
      bv = Math.min(bv, (bean.getCurrentThreadCpuTime() - t) / 20000);
      t = bean.getCurrentThreadCpuTime();
      for (int i = 0; i < 20000; i++) { s.key(key, 0); s.blocks(msg, 0, 1408); s.tag(t2, 0); key[0] ^= t2[0]; }
      bs = Math.min(bs, (bean.getCurrentThreadCpuTime() - t) / 20000);
    }
    System.out.println("1,408 bytes keyed, thread CPU ns (best of 30 x 20000): vector-api 4-way " + bv + ", scalar radix-2^64 " + bs);
  }
}
