package org.jflannel.backend.wireguard.crypto;

import static org.jflannel.backend.wireguard.crypto.JdkInternals.CHACHA_BLOCK;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;

/**
 * RFC 8439 §2.4's ChaCha20 keystream from the JDK's intrinsified block function
 * ({@link JdkInternals#CHACHA_BLOCK}: AVX-512 gives 16 blocks a call, AVX2 4, the Java code 1), and
 * the xor of data with it. The state, keystream and data buffers are this instance's: nothing is
 * allocated per message. Shared by both engines that use the JDK's ChaCha20 ({@link IntrinsicEngine},
 * {@link Poly64Engine}); only constructed when {@link JdkInternals#UNAVAILABLE} is null.
 */
final class ChaCha20Stream {
    private static final VarHandle LONGS = MethodHandles.byteArrayViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle INTS = MethodHandles.byteArrayViewVarHandle(int[].class, ByteOrder.LITTLE_ENDIAN);

    private final int[] state = new int[16];
    /** The size the intrinsic writes at most (16 blocks; the Java code writes one block), and 8 bytes for {@link #crypt}'s last long. */
    private final byte[] keystream = new byte[1024 + 8];
    /** The data being crypted, at the same indexes as its keystream (see {@link #crypt}). */
    private final byte[] chunk = new byte[1024 + 8];
    /** The next keystream block number, and how many keystream bytes the last call wrote. */
    private int block;
    private int ksLength;

    /** Key and nonce into the state; the next keystream call computes from block {@code firstBlock}. */
    void start(byte[] key, int fixed, long nonce, int firstBlock) {
        if (key.length != 32) {
            throw new IllegalArgumentException("chacha20-poly1305 key: expected 32 bytes, got " + key.length);
        }
        int[] s = state;
        s[0] = 0x61707865;
        s[1] = 0x3320646e;
        s[2] = 0x79622d32;
        s[3] = 0x6b206574;
        for (int i = 0; i < 8; i++) {
            s[4 + i] = (int) INTS.get(key, 4 * i);
        }
        s[13] = fixed;
        s[14] = (int) nonce;
        s[15] = (int) (nonce >>> 32);
        block = firstBlock;
        ksLength = 0;
    }

    /** The keystream buffer: the last call's bytes from index 0 (block 0's first 32 bytes key Poly1305). */
    byte[] keystream() {
        return keystream;
    }

    /** Keystream bytes the block function's last call wrote. */
    int lastKeystreamBytes() {
        return ksLength;
    }

    /** Computes the next blocks' keystream into {@link #keystream()}. */
    void next() {
        state[12] = block;
        int n;
        try {
            n = (int) CHACHA_BLOCK.invokeExact(state, keystream);
        } catch (Throwable e) {
            throw new IllegalStateException("chacha20 block", e);
        }
        ksLength = n;
        block += n >>> 6;
    }

    /** XORs {@code len} bytes of keystream, from {@code ksAt} in the current keystream, onto {@code in} into {@code out}. */
    void crypt(byte[] in, int off, int len, byte[] out, int outOff, int ksAt) {
        byte[] ks = keystream;
        while (len > 0) {
            if (ksAt >= ksLength) {
                next();
                ksAt = 0;
            }
            int n = Math.min(len, ksLength - ksAt);
            // through a buffer beside the keystream, at the keystream's own indexes: C2 vectorizes a
            // loop over two arrays at one index (they may be one array: no dependence between
            // iterations either way) but not at two offsets it cannot tell apart (JDK 25); the two
            // copies are the JDK's vectorized array copy. Measured: ≈ 2× faster than 8 bytes a step
            // at three offsets. The xor itself 8 bytes a step (a last long may run up to 7 bytes
            // past the data, into bytes nobody reads): 96–116 → 70–74 ns a 1,420-byte message with the
            // copies, against a byte a step (XorBench, session 14).
            System.arraycopy(in, off, chunk, ksAt, n);
            byte[] c = chunk;
            for (int j = ksAt, end = ksAt + n; j < end; j += 8) {
                LONGS.set(c, j, (long) LONGS.get(c, j) ^ (long) LONGS.get(ks, j));
            }
            System.arraycopy(c, ksAt, out, outOff, n);
            off += n;
            outOff += n;
            ksAt += n;
            len -= n;
        }
    }
}
