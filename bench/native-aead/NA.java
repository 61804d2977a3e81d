import java.lang.foreign.*;
import java.lang.invoke.*;
import java.nio.ByteOrder;
import java.util.*;
import javax.crypto.Cipher;
import javax.crypto.spec.IvParameterSpec;
import javax.crypto.spec.SecretKeySpec;

/**
 * Issue 40's "native code per packet" question, measured: ChaCha20-Poly1305 through an FFM downcall into Debian's
 * libcrypto.so.3 (EVP, chacha20-poly1305; one context per direction, kept; key and nonce per message through
 * EVP_*Init_ex with a null cipher; no AAD call when the AAD is empty, as in WireGuard data; the tag by
 * EVP_CIPHER_CTX_ctrl GET_TAG / SET_TAG), against the JDK cipher and the backend's own two engines
 * (IntrinsicEngine, Poly64Engine: package-private, reached by reflection; their methods through static final
 * handles, so C2 compiles them as the daemon's). Native variants:
 *   heap-critical  Linker.Option.critical(true): heap byte[] passed as heap segments, no copy, no thread-state
 *                  transition;
 *   copy           ordinary downcalls, the message copied into native memory and the result out again;
 *   direct         ordinary downcalls on data already in native memory (what a data plane with direct buffers
 *                  all the way would pay), and direct-critical, the same with critical(true).
 * Checks each against javax.crypto's cipher on RFC 8439 §2.8.2 and on 1,000 random messages (WireGuard nonces,
 * 0..1,500 bytes), and that a flipped tag bit fails; measures the bare downcall (OpenSSL_version_num, and the
 * GET_TAG ctrl) and the 0-byte message; then times seal and open of 1,420 bytes: thread CPU ns per message,
 * best and median of 30 rounds x 20,000 after 8 warm-up rounds, the variants interleaved round by round.
 * Critical downcalls skip the stub's vzeroupper, which costs them 120-250 ns a message next to OpenSSL's AVX-512 code
 * (docs/benchmarks/wireguard.md, "Native AEAD through FFM, measured"); evp-loop.c is the same EVP sequence without
 * Java; run.sh runs both in one CPU configuration. Not on the product's path. Run, on Temurin 25, after
 * mvn -pl backend-wireguard -am install:
 *   J=/usr/lib/jvm/temurin-25-jdk-amd64/bin; $J/javac -d /tmp/na bench/native-aead/NA.java
 *   $J/java --enable-native-access=ALL-UNNAMED --add-opens=java.base/com.sun.crypto.provider=ALL-UNNAMED \
 *     --add-exports=java.base/sun.security.util.math=ALL-UNNAMED \
 *     -cp /tmp/na:backend-wireguard/target/classes NA            (AVX2 host: -XX:UseAVX=2, OPENSSL_ia32cap=:~0x210000)
 */
public class NA {
  static final ValueLayout.OfInt LE_INT = ValueLayout.JAVA_INT_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
  static final ValueLayout.OfLong LE_LONG = ValueLayout.JAVA_LONG_UNALIGNED.withOrder(ByteOrder.LITTLE_ENDIAN);
  static final int TAG = 16, GET_TAG = 0x10, SET_TAG = 0x11;
  static final Linker L = Linker.nativeLinker();
  static final SymbolLookup LIB = SymbolLookup.libraryLookup("libcrypto.so.3", Arena.global());
  static final AddressLayout A = ValueLayout.ADDRESS;
  static final ValueLayout.OfInt I = ValueLayout.JAVA_INT;
  static final FunctionDescriptor INIT = FunctionDescriptor.of(I, A, A, A, A, A);
  static final FunctionDescriptor UPDATE = FunctionDescriptor.of(I, A, A, A, A, I);
  static final FunctionDescriptor FINAL = FunctionDescriptor.of(I, A, A, A);
  static final FunctionDescriptor CTRL = FunctionDescriptor.of(I, A, I, I, A);
  static final Linker.Option CRIT = Linker.Option.critical(true);

  static MethodHandle h(String name, FunctionDescriptor d, Linker.Option... o) {
    return L.downcallHandle(LIB.find(name).orElseThrow(() -> new IllegalStateException("libcrypto.so.3: no " + name)), d, o);
  }

  static final MethodHandle CTX_NEW = h("EVP_CIPHER_CTX_new", FunctionDescriptor.of(A));
  static final MethodHandle CIPHER = h("EVP_chacha20_poly1305", FunctionDescriptor.of(A));
  static final MethodHandle VERSION = h("OpenSSL_version_num", FunctionDescriptor.of(ValueLayout.JAVA_LONG));
  static final MethodHandle VERSION_C = h("OpenSSL_version_num", FunctionDescriptor.of(ValueLayout.JAVA_LONG), CRIT);
  static final MethodHandle EI = h("EVP_EncryptInit_ex", INIT), EI_C = h("EVP_EncryptInit_ex", INIT, CRIT);
  static final MethodHandle DI = h("EVP_DecryptInit_ex", INIT), DI_C = h("EVP_DecryptInit_ex", INIT, CRIT);
  static final MethodHandle EU = h("EVP_EncryptUpdate", UPDATE), EU_C = h("EVP_EncryptUpdate", UPDATE, CRIT);
  static final MethodHandle DU = h("EVP_DecryptUpdate", UPDATE), DU_C = h("EVP_DecryptUpdate", UPDATE, CRIT);
  static final MethodHandle EF = h("EVP_EncryptFinal_ex", FINAL), EF_C = h("EVP_EncryptFinal_ex", FINAL, CRIT);
  static final MethodHandle DF = h("EVP_DecryptFinal_ex", FINAL), DF_C = h("EVP_DecryptFinal_ex", FINAL, CRIT);
  static final MethodHandle CT = h("EVP_CIPHER_CTX_ctrl", CTRL), CT_C = h("EVP_CIPHER_CTX_ctrl", CTRL, CRIT);

  /** seal/open as the backend's AeadEngine has them. */
  interface Aead {
    int seal(byte[] key, int fixed, long counter, byte[] in, int off, int len, byte[] aad, byte[] out, int outOff);
    int open(byte[] key, int fixed, long counter, byte[] in, int off, int len, byte[] aad, byte[] out, int outOff);
  }

  enum Mode { HEAP, COPY, DIRECT }

  /**
   * libcrypto's EVP chacha20-poly1305, one context per direction. One subclass per variant, each with its own small
   * seal and open (a shared one had the variants' segment types and branches in one profile, and at 329 bytes of
   * bytecode C2 did not inline it: its segments were allocated and unboxed through the slow path, +150-250 ns).
   */
  abstract static class Native implements Aead {
    final Mode mode;
    final MemorySegment enc, dec, outl, iv, key, scratch, nin, nout;
    /** DIRECT mode: the harness's arrays mirrored in native memory once (the data "already there"); a few, found by identity. */
    final byte[][] mirrored = new byte[8][];
    final MemorySegment[] mirrors = new MemorySegment[8];
    int nMirrors;

    Native(Mode mode) {
      this.mode = mode;
      Arena a = Arena.ofAuto();
      outl = a.allocate(8); iv = a.allocate(12); key = a.allocate(32); scratch = a.allocate(64);
      nin = a.allocate(4096); nout = a.allocate(4096);
      try {
        MemorySegment c = (MemorySegment) CIPHER.invokeExact();
        enc = (MemorySegment) CTX_NEW.invokeExact();
        dec = (MemorySegment) CTX_NEW.invokeExact();
        if (enc.address() == 0 || dec.address() == 0 || c.address() == 0) throw new IllegalStateException("EVP_CIPHER_CTX_new / EVP_chacha20_poly1305: null");
        check((int) EI.invokeExact(enc, c, MemorySegment.NULL, MemorySegment.NULL, MemorySegment.NULL), "EVP_EncryptInit_ex");
        check((int) DI.invokeExact(dec, c, MemorySegment.NULL, MemorySegment.NULL, MemorySegment.NULL), "EVP_DecryptInit_ex");
      } catch (Throwable e) { throw new IllegalStateException(e); }
    }

    MemorySegment mirror(byte[] arr) {
      for (int i = 0; i < nMirrors; i++) if (mirrored[i] == arr) return mirrors[i];
      if (nMirrors == mirrors.length) throw new IllegalStateException("too many mirrors");
      mirrored[nMirrors] = arr;
      return mirrors[nMirrors++] = Arena.ofAuto().allocate(Math.max(1, arr.length));
    }

    void clearMirrors() { Arrays.fill(mirrored, null); Arrays.fill(mirrors, null); nMirrors = 0; }

    void refresh(byte[] arr) { MemorySegment.copy(arr, 0, mirror(arr), ValueLayout.JAVA_BYTE, 0, arr.length); }

    void nonce(int fixed, long counter) { iv.set(LE_INT, 0, fixed); iv.set(LE_LONG, 4, counter); }

    MemorySegment nativeKey(byte[] k) {
      MemorySegment.copy(k, 0, key, ValueLayout.JAVA_BYTE, 0, 32);
      return key;
    }

    /** The AAD (only the RFC vector has one): copied to native memory, an ordinary call; after the init, before the data. */
    void aad(boolean seal, byte[] aad) {
      MemorySegment s = nin.asSlice(3072, aad.length);
      MemorySegment.copy(aad, 0, s, ValueLayout.JAVA_BYTE, 0, aad.length);
      try {
        check(seal ? (int) EU.invokeExact(enc, MemorySegment.NULL, outl, s, aad.length) : (int) DU.invokeExact(dec, MemorySegment.NULL, outl, s, aad.length), "Update aad");
      } catch (Throwable e) { throw new IllegalStateException(e); }
    }

    /** Ordinary downcalls, native segments. */
    void sealN(MemorySegment k, byte[] aad, MemorySegment src, int len, MemorySegment dst) throws Throwable {
      check((int) EI.invokeExact(enc, MemorySegment.NULL, MemorySegment.NULL, k, iv), "EVP_EncryptInit_ex");
      if (aad != null && aad.length > 0) aad(true, aad);
      if (len > 0) check((int) EU.invokeExact(enc, dst, outl, src, len), "EVP_EncryptUpdate");
      check((int) EF.invokeExact(enc, scratch, outl), "EVP_EncryptFinal_ex");
      check((int) CT.invokeExact(enc, GET_TAG, TAG, dst.asSlice(len, TAG)), "GET_TAG");
    }

    /** libcrypto writes the plaintext before it checks the tag: on false the caller must drop what it wrote. */
    boolean openN(MemorySegment k, byte[] aad, MemorySegment src, int n, MemorySegment dst) throws Throwable {
      check((int) DI.invokeExact(dec, MemorySegment.NULL, MemorySegment.NULL, k, iv), "EVP_DecryptInit_ex");
      if (aad != null && aad.length > 0) aad(false, aad);
      if (n > 0) check((int) DU.invokeExact(dec, dst, outl, src, n), "EVP_DecryptUpdate");
      check((int) CT.invokeExact(dec, SET_TAG, TAG, src.asSlice(n, TAG)), "SET_TAG");
      return (int) DF.invokeExact(dec, scratch, outl) > 0;
    }

    /**
     * Critical downcalls, native segments (DirectCritical only). A copy of sealN/openN with the _C handles on purpose:
     * invokeExact must see a static final handle to be inlined, and a handle passed in (or one method for both) measured
     * 150-250 ns a message slower, which would be charged to the variant being measured.
     */
    void sealNC(MemorySegment k, byte[] aad, MemorySegment src, int len, MemorySegment dst) throws Throwable {
      check((int) EI_C.invokeExact(enc, MemorySegment.NULL, MemorySegment.NULL, k, iv), "EVP_EncryptInit_ex");
      if (aad != null && aad.length > 0) aad(true, aad);
      if (len > 0) check((int) EU_C.invokeExact(enc, dst, outl, src, len), "EVP_EncryptUpdate");
      check((int) EF_C.invokeExact(enc, scratch, outl), "EVP_EncryptFinal_ex");
      check((int) CT_C.invokeExact(enc, GET_TAG, TAG, dst.asSlice(len, TAG)), "GET_TAG");
    }

    boolean openNC(MemorySegment k, byte[] aad, MemorySegment src, int n, MemorySegment dst) throws Throwable {
      check((int) DI_C.invokeExact(dec, MemorySegment.NULL, MemorySegment.NULL, k, iv), "EVP_DecryptInit_ex");
      if (aad != null && aad.length > 0) aad(false, aad);
      if (n > 0) check((int) DU_C.invokeExact(dec, dst, outl, src, n), "EVP_DecryptUpdate");
      check((int) CT_C.invokeExact(dec, SET_TAG, TAG, src.asSlice(n, TAG)), "SET_TAG");
      return (int) DF_C.invokeExact(dec, scratch, outl) > 0;
    }

    static void check(int rc, String what) { if (rc != 1) throw new IllegalStateException(what + " returned " + rc); }

    static IllegalStateException wrap(Throwable e) { return e instanceof RuntimeException r ? new IllegalStateException(r) : new IllegalStateException(e); }
  }

  /** critical(true): the heap arrays passed as heap segments, no copy. */
  static final class HeapCritical extends Native {
    HeapCritical() { super(Mode.HEAP); }

    @Override public int seal(byte[] k, int fixed, long counter, byte[] in, int off, int len, byte[] aad, byte[] out, int outOff) {
      Objects.checkFromIndexSize(off, len, in.length);
      Objects.checkFromIndexSize(outOff, len + TAG, out.length);
      nonce(fixed, counter);
      MemorySegment ks = MemorySegment.ofArray(k), src = MemorySegment.ofArray(in).asSlice(off, len), o = MemorySegment.ofArray(out);
      try {
        check((int) EI_C.invokeExact(enc, MemorySegment.NULL, MemorySegment.NULL, ks, iv), "EVP_EncryptInit_ex");
        if (aad != null && aad.length > 0) aad(true, aad);
        if (len > 0) check((int) EU_C.invokeExact(enc, o.asSlice(outOff, len), outl, src, len), "EVP_EncryptUpdate");
        check((int) EF_C.invokeExact(enc, scratch, outl), "EVP_EncryptFinal_ex");
        check((int) CT_C.invokeExact(enc, GET_TAG, TAG, o.asSlice(outOff + len, TAG)), "GET_TAG");
      } catch (Throwable e) { throw wrap(e); }
      return len + TAG;
    }

    @Override public int open(byte[] k, int fixed, long counter, byte[] in, int off, int len, byte[] aad, byte[] out, int outOff) {
      if (len < TAG) return -1;
      int n = len - TAG;
      Objects.checkFromIndexSize(off, len, in.length);
      Objects.checkFromIndexSize(outOff, n, out.length);
      nonce(fixed, counter);
      MemorySegment ks = MemorySegment.ofArray(k), i = MemorySegment.ofArray(in);
      try {
        check((int) DI_C.invokeExact(dec, MemorySegment.NULL, MemorySegment.NULL, ks, iv), "EVP_DecryptInit_ex");
        if (aad != null && aad.length > 0) aad(false, aad);
        if (n > 0) check((int) DU_C.invokeExact(dec, MemorySegment.ofArray(out).asSlice(outOff, n), outl, i.asSlice(off, n), n), "EVP_DecryptUpdate");
        check((int) CT_C.invokeExact(dec, SET_TAG, TAG, i.asSlice(off + n, TAG)), "SET_TAG");
        return (int) DF_C.invokeExact(dec, scratch, outl) > 0 ? n : -1; // on -1 out holds unauthenticated bytes: dropped
      } catch (Throwable e) { throw wrap(e); }
    }
  }

  /** Ordinary downcalls; the message copied into native memory and the result back. */
  static final class Copy extends Native {
    Copy() { super(Mode.COPY); }

    @Override public int seal(byte[] k, int fixed, long counter, byte[] in, int off, int len, byte[] aad, byte[] out, int outOff) {
      Objects.checkFromIndexSize(off, len, in.length);
      Objects.checkFromIndexSize(outOff, len + TAG, out.length);
      nonce(fixed, counter);
      MemorySegment.copy(in, off, nin, ValueLayout.JAVA_BYTE, 0, len);
      try { sealN(nativeKey(k), aad, nin, len, nout); } catch (Throwable e) { throw wrap(e); }
      MemorySegment.copy(nout, ValueLayout.JAVA_BYTE, 0, out, outOff, len + TAG);
      return len + TAG;
    }

    @Override public int open(byte[] k, int fixed, long counter, byte[] in, int off, int len, byte[] aad, byte[] out, int outOff) {
      if (len < TAG) return -1;
      int n = len - TAG;
      Objects.checkFromIndexSize(off, len, in.length);
      Objects.checkFromIndexSize(outOff, n, out.length);
      nonce(fixed, counter);
      MemorySegment.copy(in, off, nin, ValueLayout.JAVA_BYTE, 0, len);
      try { if (!openN(nativeKey(k), aad, nin, n, nout)) return -1; } catch (Throwable e) { throw wrap(e); }
      MemorySegment.copy(nout, ValueLayout.JAVA_BYTE, 0, out, outOff, n);
      return n;
    }
  }

  /** The data already in native memory (the arrays' mirrors); ordinary or critical downcalls. */
  static final class Direct extends Native {
    final boolean crit;
    Direct(boolean crit) { super(Mode.DIRECT); this.crit = crit; }

    @Override public int seal(byte[] k, int fixed, long counter, byte[] in, int off, int len, byte[] aad, byte[] out, int outOff) {
      Objects.checkFromIndexSize(off, len, in.length);
      Objects.checkFromIndexSize(outOff, len + TAG, out.length);
      nonce(fixed, counter);
      MemorySegment src = mirror(in).asSlice(off, len), dst = mirror(out).asSlice(outOff, len + TAG);
      try { if (crit) sealNC(nativeKey(k), aad, src, len, dst); else sealN(nativeKey(k), aad, src, len, dst); } catch (Throwable e) { throw wrap(e); }
      return len + TAG;
    }

    @Override public int open(byte[] k, int fixed, long counter, byte[] in, int off, int len, byte[] aad, byte[] out, int outOff) {
      if (len < TAG) return -1;
      int n = len - TAG;
      Objects.checkFromIndexSize(off, len, in.length);
      Objects.checkFromIndexSize(outOff, n, out.length);
      nonce(fixed, counter);
      MemorySegment src = mirror(in).asSlice(off, len), dst = mirror(out).asSlice(outOff, n);
      try { return (crit ? openNC(nativeKey(k), aad, src, n, dst) : openN(nativeKey(k), aad, src, n, dst)) ? n : -1; } catch (Throwable e) { throw wrap(e); }
    }
  }

  /** The JDK's public cipher, as the backend's CipherEngine uses it: init per message, doFinal. */
  static final class Jdk implements Aead {
    final Cipher c;
    final byte[] nonce = new byte[12];
    byte[] lastKey; SecretKeySpec spec;
    Jdk() throws Exception { c = Cipher.getInstance("ChaCha20-Poly1305"); }
    void init(int mode, byte[] k, int fixed, long counter, byte[] aad) throws Exception {
      for (int i = 0; i < 4; i++) nonce[i] = (byte) (fixed >>> 8 * i);
      for (int i = 0; i < 8; i++) nonce[4 + i] = (byte) (counter >>> 8 * i);
      if (k != lastKey) { spec = new SecretKeySpec(k, "ChaCha20"); lastKey = k; }
      try { c.init(mode, spec, new IvParameterSpec(nonce)); }
      catch (java.security.InvalidKeyException e) { // same key and nonce as the last encrypt: through another first
        byte[] o = nonce.clone(); o[0] ^= 1; c.init(mode, spec, new IvParameterSpec(o)); c.init(mode, spec, new IvParameterSpec(nonce));
      }
      if (aad != null && aad.length > 0) c.updateAAD(aad);
    }
    @Override public int seal(byte[] k, int fixed, long counter, byte[] in, int off, int len, byte[] aad, byte[] out, int outOff) {
      try { init(Cipher.ENCRYPT_MODE, k, fixed, counter, aad); return c.doFinal(in, off, len, out, outOff); }
      catch (Exception e) { throw new IllegalStateException(e); }
    }
    @Override public int open(byte[] k, int fixed, long counter, byte[] in, int off, int len, byte[] aad, byte[] out, int outOff) {
      try { init(Cipher.DECRYPT_MODE, k, fixed, counter, aad); return c.doFinal(in, off, len, out, outOff); }
      catch (javax.crypto.AEADBadTagException e) { return -1; }
      catch (Exception e) { throw new IllegalStateException(e); }
    }
  }

  /** One of the backend's engines (package-private classes: reflection, then static final handles). */
  static final String PKG = "org.jflannel.backend.wireguard.crypto.";
  static final MethodHandle E_SEAL, E_OPEN;
  static {
    try {
      Class<?> iface = Class.forName(PKG + "AeadEngine");
      MethodHandles.Lookup lk = MethodHandles.privateLookupIn(iface, MethodHandles.lookup());
      MethodType t = MethodType.methodType(int.class, byte[].class, int.class, long.class, byte[].class, int.class, int.class, byte[].class, byte[].class, int.class);
      E_SEAL = lk.findVirtual(iface, "seal", t).asType(t.insertParameterTypes(0, Object.class));
      E_OPEN = lk.findVirtual(iface, "open", t).asType(t.insertParameterTypes(0, Object.class));
    } catch (ReflectiveOperationException e) { throw new ExceptionInInitializerError(e); }
  }

  static final class Ours implements Aead {
    final Object e;
    Ours(String cls) throws Exception {
      var k = Class.forName(PKG + cls).getDeclaredConstructor();
      k.setAccessible(true);
      e = k.newInstance();
      var f = Class.forName(PKG + "JdkInternals").getDeclaredField("UNAVAILABLE");
      f.setAccessible(true);
      String why = (String) f.get(null);
      if (why != null) throw new IllegalStateException("jdk internals unavailable: " + why);
    }
    @Override public int seal(byte[] k, int fixed, long counter, byte[] in, int off, int len, byte[] aad, byte[] out, int outOff) {
      try { return (int) E_SEAL.invokeExact(e, k, fixed, counter, in, off, len, aad, out, outOff); }
      catch (RuntimeException x) { throw x; } catch (Throwable x) { throw new IllegalStateException(x); }
    }
    @Override public int open(byte[] k, int fixed, long counter, byte[] in, int off, int len, byte[] aad, byte[] out, int outOff) {
      try { return (int) E_OPEN.invokeExact(e, k, fixed, counter, in, off, len, aad, out, outOff); }
      catch (RuntimeException x) { throw x; } catch (Throwable x) { throw new IllegalStateException(x); }
    }
  }

  static final HexFormat HEX = HexFormat.of();

  /** Seal through a, out of place; DIRECT mode's data goes through its native mirrors. */
  static byte[] seal(Aead a, byte[] k, int fixed, long ctr, byte[] m, byte[] aad) {
    byte[] out = new byte[m.length + TAG];
    if (a instanceof Native n && n.mode == Mode.DIRECT) {
      n.refresh(m);
      n.seal(k, fixed, ctr, m, 0, m.length, aad, out, 0);
      MemorySegment.copy(n.mirror(out), ValueLayout.JAVA_BYTE, 0, out, 0, out.length);
      n.clearMirrors();
    } else if (a.seal(k, fixed, ctr, m, 0, m.length, aad, out, 0) != out.length) throw new AssertionError("seal length");
    return out;
  }

  /** Open through a; null when the tag fails. */
  static byte[] open(Aead a, byte[] k, int fixed, long ctr, byte[] s, byte[] aad) {
    byte[] out = new byte[s.length - TAG];
    int r;
    if (a instanceof Native n && n.mode == Mode.DIRECT) {
      n.refresh(s);
      r = n.open(k, fixed, ctr, s, 0, s.length, aad, out, 0);
      if (r >= 0) MemorySegment.copy(n.mirror(out), ValueLayout.JAVA_BYTE, 0, out, 0, out.length);
      n.clearMirrors();
    } else r = a.open(k, fixed, ctr, s, 0, s.length, aad, out, 0);
    return r < 0 ? null : out;
  }

  static void verify(String name, Aead a) throws Exception {
    // RFC 8439 §2.8.2
    byte[] k = HEX.parseHex("808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f");
    byte[] aad = HEX.parseHex("50515253c0c1c2c3c4c5c6c7");
    byte[] p = ("Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.").getBytes("US-ASCII");
    String want = "d31a8d34648e60db7b86afbc53ef7ec2a4aded51296e08fea9e2b5a736ee62d63dbea45e8ca9671282fafb69da92728b"
        + "1a71de0a9e060b2905d6a5b67ecd3b3692ddbd7f2d778b8c9803aee328091b58fab324e4fad675945585808b4831d7bc3ff4def08e4b7a9de576d2"
        + "6586cec64b61161ae10b594f09e26a7e902ecbd0600691";
    int fixed = 7; long ctr = 0x4746454443424140L;
    byte[] s = seal(a, k, fixed, ctr, p, aad);
    if (!HEX.formatHex(s).equals(want)) throw new AssertionError(name + ": RFC 8439 2.8.2 seal: " + HEX.formatHex(s));
    if (!Arrays.equals(open(a, k, fixed, ctr, s, aad), p)) throw new AssertionError(name + ": RFC 8439 2.8.2 open");
    // 1,000 random WireGuard messages against javax.crypto's cipher; a flipped tag bit must fail
    Random r = new Random(40);
    Jdk ref = new Jdk();
    int fails = 0;
    for (int i = 0; i < 1000; i++) {
      byte[] key = new byte[32]; r.nextBytes(key);
      byte[] m = new byte[r.nextInt(1501)]; r.nextBytes(m);
      long c = r.nextLong();
      byte[] got = seal(a, key, 0, c, m, null), exp = seal(ref, key, 0, c, m, null);
      if (!Arrays.equals(got, exp)) throw new AssertionError(name + ": message " + i + " (" + m.length + " bytes) differs from javax.crypto's");
      if (!Arrays.equals(open(a, key, 0, c, got, null), m)) throw new AssertionError(name + ": message " + i + " does not open");
      got[m.length + r.nextInt(TAG)] ^= (byte) (1 << r.nextInt(8));
      if (open(a, key, 0, c, got, null) != null) throw new AssertionError(name + ": message " + i + " opened with a tampered tag");
      fails++;
    }
    System.out.println("check " + name + ": RFC 8439 2.8.2 ok, 1000 random messages equal to javax.crypto's, " + fails + " tampered tags refused");
  }

  static final com.sun.management.ThreadMXBean BEAN = (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
  static final int N = 20_000, ROUNDS = Integer.getInteger("na.rounds", 30), WARM = Integer.getInteger("na.warm", 8), LEN = 1420;
  static long sink;

  /** CPU ns per message of n seals (op 0) or opens (op 1) of LEN bytes; counters move on for seals. */
  static long round(Aead a, int op, byte[] key, byte[] plain, byte[] sealed, byte[] opened, long[] ctr, long[] alloc) {
    long b0 = BEAN.getCurrentThreadAllocatedBytes();
    long t = BEAN.getCurrentThreadCpuTime();
    int acc = 0;
    if (op == 0) {
      long c = ctr[0];
      for (int i = 0; i < N; i++) acc += a.seal(key, 0, c++, plain, 0, LEN, null, sealed, 0);
      ctr[0] = c;
    } else {
      for (int i = 0; i < N; i++) acc += a.open(key, 0, 1, sealed, 0, LEN + TAG, null, opened, 0);
    }
    long ns = (BEAN.getCurrentThreadCpuTime() - t) / N;
    alloc[0] = (BEAN.getCurrentThreadAllocatedBytes() - b0) / N;
    sink += acc;
    return ns;
  }

  /** CPU ns per call of a bare downcall. */
  static double bare(boolean crit) throws Throwable {
    long best = Long.MAX_VALUE, x = 0;
    for (int r = 0; r < 20; r++) {
      long t = BEAN.getCurrentThreadCpuTime();
      if (crit) for (int i = 0; i < 1_000_000; i++) x += (long) VERSION_C.invokeExact();
      else for (int i = 0; i < 1_000_000; i++) x += (long) VERSION.invokeExact();
      best = Math.min(best, BEAN.getCurrentThreadCpuTime() - t);
    }
    sink += x;
    return best / 1e6;
  }

  static double ctrl(Native n, boolean crit) throws Throwable {
    n.seal(new byte[32], 0, 1, new byte[64], 0, 64, null, new byte[80], 0);
    long best = Long.MAX_VALUE, x = 0;
    for (int r = 0; r < 20; r++) {
      long t = BEAN.getCurrentThreadCpuTime();
      if (crit) for (int i = 0; i < 100_000; i++) x += (int) CT_C.invokeExact(n.enc, GET_TAG, TAG, n.scratch);
      else for (int i = 0; i < 100_000; i++) x += (int) CT.invokeExact(n.enc, GET_TAG, TAG, n.scratch);
      best = Math.min(best, BEAN.getCurrentThreadCpuTime() - t);
    }
    sink += x;
    return best / 1e5;
  }

  static long zero(Native n) {
    byte[] k = new byte[32], e = new byte[0], o = new byte[TAG];
    long best = Long.MAX_VALUE;
    for (int r = 0; r < 20; r++) {
      long t = BEAN.getCurrentThreadCpuTime();
      for (int i = 0; i < 100_000; i++) n.seal(k, 0, i, e, 0, 0, null, o, 0);
      best = Math.min(best, BEAN.getCurrentThreadCpuTime() - t);
    }
    return best / 100_000;
  }

  public static void main(String[] args) throws Throwable {
    System.out.println("java " + Runtime.version() + ", " + System.getProperty("java.vm.name") + "; libcrypto " + Long.toHexString((long) VERSION.invokeExact())
        + "; OPENSSL_ia32cap=" + System.getenv("OPENSSL_ia32cap") + "; UseAVX=" + java.lang.management.ManagementFactory.getPlatformMXBean(com.sun.management.HotSpotDiagnosticMXBean.class).getVMOption("UseAVX").getValue());
    System.out.println();
    LinkedHashMap<String, Aead> v = new LinkedHashMap<>();
    v.put("native heap-critical", new HeapCritical());
    v.put("native copy", new Copy());
    v.put("native direct", new Direct(false));
    v.put("native direct-critical", new Direct(true));
    v.put("jdk Cipher", new Jdk());
    v.put("ours jdk-intrinsics", new Ours("IntrinsicEngine"));
    v.put("ours jdk-chacha20-poly64", new Ours("Poly64Engine"));
    for (var e : v.entrySet()) verify(e.getKey(), e.getValue());

    Native hc = (Native) v.get("native heap-critical"), cp = (Native) v.get("native copy");
    for (int w = 0; w < 3; w++) { bare(false); bare(true); ctrl(cp, false); ctrl(hc, true); zero(hc); zero(cp); }
    System.out.printf("bare downcall OpenSSL_version_num, CPU ns/call (best of 20 x 1e6): ordinary %.1f, critical %.1f%n", bare(false), bare(true));
    System.out.printf("EVP_CIPHER_CTX_ctrl GET_TAG, CPU ns/call (best of 20 x 1e5): ordinary %.1f, critical %.1f%n", ctrl(cp, false), ctrl(hc, true));
    System.out.println("0-byte seal (init, final, GET_TAG), CPU ns/message (best of 20 x 1e5): heap-critical " + zero(hc) + ", copy " + zero(cp));

    byte[] key = new byte[32], plain = new byte[LEN], sealedBuf = new byte[LEN + TAG], opened = new byte[LEN];
    Random r = new Random(1);
    r.nextBytes(key); r.nextBytes(plain);
    byte[] sealed = seal(new Jdk(), key, 0, 1, plain, null); // every open: counter 1
    System.arraycopy(sealed, 0, sealedBuf, 0, sealed.length);
    for (Aead a : v.values()) if (a instanceof Native n && n.mode == Mode.DIRECT) { n.refresh(plain); n.refresh(sealedBuf); n.mirror(opened); }
    String[] names = v.keySet().toArray(new String[0]);
    long[][][] t = new long[names.length][2][ROUNDS];
    long[][] al = new long[names.length][2];
    long[] ctr = {1000}, alloc = new long[1];
    byte[] scratch = new byte[LEN + TAG];
    for (int round = -WARM; round < ROUNDS; round++) {
      for (int i = 0; i < names.length; i++) {
        Aead a = v.get(names[i]);
        for (int op = 0; op < 2; op++) {
          long ns = round(a, op, key, plain, op == 0 ? scratch : sealedBuf, opened, ctr, alloc);
          if (round >= 0) { t[i][op][round] = ns; al[i][op] = Math.max(al[i][op], alloc[0]); }
        }
      }
    }
    System.out.printf("%nCPU ns per %d-byte message, %d rounds x %d after %d warm-up; best / median; bytes allocated per message (max round)%n", LEN, ROUNDS, N, WARM);
    System.out.printf("%-26s %14s %14s %10s%n", "variant", "seal", "open", "alloc s/o");
    for (int i = 0; i < names.length; i++) {
      long[] s = t[i][0].clone(), o = t[i][1].clone();
      Arrays.sort(s); Arrays.sort(o);
      System.out.printf("%-26s %6d / %5d %6d / %5d %5d/%d%n", names[i], s[0], s[ROUNDS / 2], o[0], o[ROUNDS / 2], al[i][0], al[i][1]);
    }
    // the timed opens' results were not checked inside the loop: the message must open, and to the plaintext
    if (v.get("native direct").open(key, 0, 1, sealedBuf, 0, LEN + TAG, null, opened, 0) != LEN) throw new AssertionError("direct open of the timed message failed");
    if (hc.open(key, 0, 1, sealedBuf, 0, LEN + TAG, null, opened, 0) != LEN || !Arrays.equals(opened, plain)) throw new AssertionError("timed message does not open");
    System.out.println("sink " + (sink & 1));
  }
}
