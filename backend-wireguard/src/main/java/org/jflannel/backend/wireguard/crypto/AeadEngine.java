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

    /** A short name for the log and the benchmarks. */
    String name();
}
