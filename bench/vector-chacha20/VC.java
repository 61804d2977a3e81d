import java.lang.invoke.*;
import java.nio.ByteOrder;
import jdk.incubator.vector.*;

/**
 * Issue 40's check of "ChaCha20 under AVX2: would a Vector API 8-block version beat the JDK's intrinsic?":
 * 8 ChaCha20 blocks at once, one per 32-bit lane of 256-bit vectors (the state word-sliced into 16 vectors),
 * the keystream transposed back through an int[]; checked against the JDK's implChaCha20Block on 24 blocks,
 * then both timed in thread CPU ns for the 24 blocks a 1,420-byte WireGuard message needs. Not on the
 * product's path (it needs jdk.incubator.vector in the launchers and the image). Run, on Temurin 25:
 *   javac --add-modules jdk.incubator.vector -d /tmp/vc bench/vector-chacha20/VC.java
 *   java -XX:UseAVX=2 --add-modules jdk.incubator.vector --add-opens=java.base/com.sun.crypto.provider=ALL-UNNAMED -cp /tmp/vc VC
 */
public class VC {
  static final VectorSpecies<Integer> S = IntVector.SPECIES_256;
  static final VarHandle INTS = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);
  static final MethodHandle BLOCK;
  static {
    try {
      Class<?> c = Class.forName("com.sun.crypto.provider.ChaCha20Cipher");
      BLOCK = MethodHandles.privateLookupIn(c, MethodHandles.lookup()).findStatic(c, "implChaCha20Block", MethodType.methodType(int.class, int[].class, byte[].class));
    } catch (Exception e) { throw new RuntimeException(e); }
  }
  static final int[] LANE = {0,1,2,3,4,5,6,7};
  final int[] tmp = new int[128];

  /** 8 blocks from state (counter at state[12]) into out[0, 512). */
  void eight(int[] st, byte[] out) {
    IntVector x0 = IntVector.broadcast(S, st[0]), x1 = IntVector.broadcast(S, st[1]), x2 = IntVector.broadcast(S, st[2]), x3 = IntVector.broadcast(S, st[3]);
    IntVector x4 = IntVector.broadcast(S, st[4]), x5 = IntVector.broadcast(S, st[5]), x6 = IntVector.broadcast(S, st[6]), x7 = IntVector.broadcast(S, st[7]);
    IntVector x8 = IntVector.broadcast(S, st[8]), x9 = IntVector.broadcast(S, st[9]), x10 = IntVector.broadcast(S, st[10]), x11 = IntVector.broadcast(S, st[11]);
    IntVector x12 = IntVector.fromArray(S, LANE, 0).add(st[12]), x13 = IntVector.broadcast(S, st[13]), x14 = IntVector.broadcast(S, st[14]), x15 = IntVector.broadcast(S, st[15]);
    IntVector c12 = x12;
    for (int r = 0; r < 10; r++) {
      x0 = x0.add(x4); x12 = x12.lanewise(VectorOperators.XOR, x0).lanewise(VectorOperators.ROL, 16); x8 = x8.add(x12); x4 = x4.lanewise(VectorOperators.XOR, x8).lanewise(VectorOperators.ROL, 12);
      x0 = x0.add(x4); x12 = x12.lanewise(VectorOperators.XOR, x0).lanewise(VectorOperators.ROL, 8); x8 = x8.add(x12); x4 = x4.lanewise(VectorOperators.XOR, x8).lanewise(VectorOperators.ROL, 7);
      x1 = x1.add(x5); x13 = x13.lanewise(VectorOperators.XOR, x1).lanewise(VectorOperators.ROL, 16); x9 = x9.add(x13); x5 = x5.lanewise(VectorOperators.XOR, x9).lanewise(VectorOperators.ROL, 12);
      x1 = x1.add(x5); x13 = x13.lanewise(VectorOperators.XOR, x1).lanewise(VectorOperators.ROL, 8); x9 = x9.add(x13); x5 = x5.lanewise(VectorOperators.XOR, x9).lanewise(VectorOperators.ROL, 7);
      x2 = x2.add(x6); x14 = x14.lanewise(VectorOperators.XOR, x2).lanewise(VectorOperators.ROL, 16); x10 = x10.add(x14); x6 = x6.lanewise(VectorOperators.XOR, x10).lanewise(VectorOperators.ROL, 12);
      x2 = x2.add(x6); x14 = x14.lanewise(VectorOperators.XOR, x2).lanewise(VectorOperators.ROL, 8); x10 = x10.add(x14); x6 = x6.lanewise(VectorOperators.XOR, x10).lanewise(VectorOperators.ROL, 7);
      x3 = x3.add(x7); x15 = x15.lanewise(VectorOperators.XOR, x3).lanewise(VectorOperators.ROL, 16); x11 = x11.add(x15); x7 = x7.lanewise(VectorOperators.XOR, x11).lanewise(VectorOperators.ROL, 12);
      x3 = x3.add(x7); x15 = x15.lanewise(VectorOperators.XOR, x3).lanewise(VectorOperators.ROL, 8); x11 = x11.add(x15); x7 = x7.lanewise(VectorOperators.XOR, x11).lanewise(VectorOperators.ROL, 7);
      // diagonal
      x0 = x0.add(x5); x15 = x15.lanewise(VectorOperators.XOR, x0).lanewise(VectorOperators.ROL, 16); x10 = x10.add(x15); x5 = x5.lanewise(VectorOperators.XOR, x10).lanewise(VectorOperators.ROL, 12);
      x0 = x0.add(x5); x15 = x15.lanewise(VectorOperators.XOR, x0).lanewise(VectorOperators.ROL, 8); x10 = x10.add(x15); x5 = x5.lanewise(VectorOperators.XOR, x10).lanewise(VectorOperators.ROL, 7);
      x1 = x1.add(x6); x12 = x12.lanewise(VectorOperators.XOR, x1).lanewise(VectorOperators.ROL, 16); x11 = x11.add(x12); x6 = x6.lanewise(VectorOperators.XOR, x11).lanewise(VectorOperators.ROL, 12);
      x1 = x1.add(x6); x12 = x12.lanewise(VectorOperators.XOR, x1).lanewise(VectorOperators.ROL, 8); x11 = x11.add(x12); x6 = x6.lanewise(VectorOperators.XOR, x11).lanewise(VectorOperators.ROL, 7);
      x2 = x2.add(x7); x13 = x13.lanewise(VectorOperators.XOR, x2).lanewise(VectorOperators.ROL, 16); x8 = x8.add(x13); x7 = x7.lanewise(VectorOperators.XOR, x8).lanewise(VectorOperators.ROL, 12);
      x2 = x2.add(x7); x13 = x13.lanewise(VectorOperators.XOR, x2).lanewise(VectorOperators.ROL, 8); x8 = x8.add(x13); x7 = x7.lanewise(VectorOperators.XOR, x8).lanewise(VectorOperators.ROL, 7);
      x3 = x3.add(x4); x14 = x14.lanewise(VectorOperators.XOR, x3).lanewise(VectorOperators.ROL, 16); x9 = x9.add(x14); x4 = x4.lanewise(VectorOperators.XOR, x9).lanewise(VectorOperators.ROL, 12);
      x3 = x3.add(x4); x14 = x14.lanewise(VectorOperators.XOR, x3).lanewise(VectorOperators.ROL, 8); x9 = x9.add(x14); x4 = x4.lanewise(VectorOperators.XOR, x9).lanewise(VectorOperators.ROL, 7);
    }
    int[] t = tmp;
    x0.add(st[0]).intoArray(t, 0); x1.add(st[1]).intoArray(t, 8); x2.add(st[2]).intoArray(t, 16); x3.add(st[3]).intoArray(t, 24);
    x4.add(st[4]).intoArray(t, 32); x5.add(st[5]).intoArray(t, 40); x6.add(st[6]).intoArray(t, 48); x7.add(st[7]).intoArray(t, 56);
    x8.add(st[8]).intoArray(t, 64); x9.add(st[9]).intoArray(t, 72); x10.add(st[10]).intoArray(t, 80); x11.add(st[11]).intoArray(t, 88);
    x12.add(c12).intoArray(t, 96); x13.add(st[13]).intoArray(t, 104); x14.add(st[14]).intoArray(t, 112); x15.add(st[15]).intoArray(t, 120);
    for (int j = 0; j < 8; j++) for (int i = 0; i < 16; i++) INTS.set(out, j * 64 + 4 * i, t[i * 8 + j]);
  }

  static void qr(int[] s, int a, int b, int c, int d) {
    s[a] += s[b]; s[d] = Integer.rotateLeft(s[d] ^ s[a], 16); s[c] += s[d]; s[b] = Integer.rotateLeft(s[b] ^ s[c], 12);
    s[a] += s[b]; s[d] = Integer.rotateLeft(s[d] ^ s[a], 8); s[c] += s[d]; s[b] = Integer.rotateLeft(s[b] ^ s[c], 7);
  }
  public static void main(String[] a) throws Throwable {
    int[] st = new int[16];
    for (int i = 0; i < 16; i++) st[i] = 0x9e3779b9 * (i + 1); st[0] = 0x61707865; st[1] = 0x3320646e; st[2] = 0x79622d32; st[3] = 0x6b206574;
    st[12] = 0;
    VC v = new VC();
    byte[] o1 = new byte[1024 + 512], o2 = new byte[1024 + 512], ks = new byte[1024];
    // correctness: 24 blocks both ways
    for (int b = 0; b < 24; b += 8) { st[12] = b; v.eight(st, ks); System.arraycopy(ks, 0, o1, b * 64, 512); }
    for (int b = 0; b < 24; ) { st[12] = b; int n = (int) BLOCK.invokeExact(st, ks); System.arraycopy(ks, 0, o2, b * 64, Math.min(n, (24 - b) * 64)); b += n >>> 6; }
    {
      int[] x = st.clone(); x[12] = 0; int[] w = x.clone();
      for (int r = 0; r < 10; r++) { qr(w,0,4,8,12); qr(w,1,5,9,13); qr(w,2,6,10,14); qr(w,3,7,11,15); qr(w,0,5,10,15); qr(w,1,6,11,12); qr(w,2,7,8,13); qr(w,3,4,9,14); }
      System.out.println("ref word0 " + Integer.toHexString(w[0] + x[0]) + " vec " + Integer.toHexString((int) INTS.get(o1, 0)) + " jdk " + Integer.toHexString((int) INTS.get(o2, 0)));
    }
    System.out.println("equal: " + java.util.Arrays.equals(o1, 0, 1536, o2, 0, 1536) + " first diff " + java.util.Arrays.mismatch(o1, o2) + " st12 " + st[12]);
    long bv = Long.MAX_VALUE, bj = Long.MAX_VALUE;
    var bean = (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
    for (int round = 0; round < 30; round++) {
      long t = bean.getCurrentThreadCpuTime();
      for (int i = 0; i < 20000; i++) { st[14]++; for (int b = 0; b < 24; b += 8) { st[12] = b; v.eight(st, ks); } }
      bv = Math.min(bv, (bean.getCurrentThreadCpuTime() - t) / 20000);
      t = bean.getCurrentThreadCpuTime();
      for (int i = 0; i < 20000; i++) { st[14]++; for (int b = 0; b < 24; ) { st[12] = b; int n = (int) BLOCK.invokeExact(st, ks); b += n >>> 6; } }
      bj = Math.min(bj, (bean.getCurrentThreadCpuTime() - t) / 20000);
    }
    System.out.println("24 blocks, thread CPU ns (best of 30 x 20000): vector-api 8-way " + bv + ", jdk intrinsic " + bj);
  }
}
