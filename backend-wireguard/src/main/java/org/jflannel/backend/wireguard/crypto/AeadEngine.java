package org.jflannel.backend.wireguard.crypto;

/**
 * One ChaCha20-Poly1305 (RFC 8439) implementation behind {@link ChaChaPoly}. The nonce is
 * {@code le32(fixed) || le64(counter)}: WireGuard's has {@code fixed = 0}; the RFC's vectors need
 * the general form. Not thread-safe: one per thread. Sealing or opening in place ({@code in == out},
 * same offset) is allowed.
 */
interface AeadEngine {
    /** Seals {@code in[off, off + len)} into {@code out} at {@code outOff}: ciphertext then the 16-byte tag. Returns {@code len + 16}. */
    int seal(byte[] key, int fixed, long counter, byte[] in, int off, int len, byte[] aad, byte[] out, int outOff);

    /** Opens {@code in[off, off + len)} (ciphertext and tag) into {@code out} at {@code outOff}; returns the plaintext's length, -1 when the tag fails. */
    int open(byte[] key, int fixed, long counter, byte[] in, int off, int len, byte[] aad, byte[] out, int outOff);

    /**
     * {@link #seal}, the ciphertext and tag written into {@code out} (a direct buffer: the send
     * batch the kernel reads) at {@code outOff}. Returns {@code len + 16}. The default seals into a
     * new array and copies it (the {@code Cipher} fallback only; the intrinsic engine writes there
     * directly, one copy of the datagram fewer).
     */
    default int sealTo(byte[] key, int fixed, long counter, byte[] in, int off, int len, byte[] aad, java.nio.ByteBuffer out, int outOff) {
        java.util.Objects.checkFromIndexSize(outOff, len + 16, out.capacity());
        byte[] sealed = new byte[len + 16];
        int n = seal(key, fixed, counter, in, off, len, aad, sealed, 0);
        out.put(outOff, sealed, 0, n);
        return n;
    }

    /**
     * {@link #open} of {@code in[off, off + len)} read from a (direct) buffer: the receive batch the
     * kernel wrote. On a failed tag -1, and {@code out[outOff, outOff + len - 16)} holds zeros (an
     * engine may decrypt while it authenticates; nothing unauthenticated is left). The default copies
     * the datagram into a new array and opens it (the {@code Cipher} fallback only).
     */
    default int openFrom(byte[] key, int fixed, long counter, java.nio.ByteBuffer in, int off, int len, byte[] aad, byte[] out, int outOff) {
        java.util.Objects.checkFromIndexSize(off, len, in.capacity());
        byte[] sealed = new byte[len];
        in.get(off, sealed, 0, len);
        return open(key, fixed, counter, sealed, 0, len, aad, out, outOff);
    }

    /** A short name for the log and the benchmarks. */
    String name();
}
