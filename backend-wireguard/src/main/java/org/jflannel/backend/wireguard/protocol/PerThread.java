package org.jflannel.backend.wireguard.protocol;

import org.jflannel.backend.wireguard.crypto.ChaChaPoly;

/**
 * What each thread that calls into a {@link Device} has of its own: the Noise state, the AEAD and a
 * plaintext buffer, so no packet allocates (a thread seals or opens one packet at a time). Shared by
 * the parts of one device, so a thread holds one of each, whichever part it is in.
 */
final class PerThread {
    final ThreadLocal<Noise> noise = ThreadLocal.withInitial(Noise::new);
    final ThreadLocal<ChaChaPoly> aead = ThreadLocal.withInitial(ChaChaPoly::new);
    private final ThreadLocal<byte[][]> scratch = ThreadLocal.withInitial(() -> new byte[][] {new byte[2048]});

    /** This thread's plaintext buffer, at least {@code n} bytes. */
    byte[] scratch(int n) {
        byte[][] holder = scratch.get();
        if (holder[0].length < n) {
            holder[0] = new byte[Math.max(n, 2 * holder[0].length)];
        }
        return holder[0];
    }
}
