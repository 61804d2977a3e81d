package org.jflannel.backend.wireguard.protocol;

import java.util.function.LongSupplier;

/**
 * When to ask for cookies: "under load" once more than {@code threshold} handshake messages arrived
 * within one {@code window} or a socket read found a backlog of them ({@link #backlog}), and for one
 * second after (wireguard-go: a handshake queue an eighth
 * full, then UnderLoadAfterTime 1 s). A flood of initiations from spoofed addresses then costs one
 * BLAKE2s each (mac1, mac2) and a cookie reply instead of Curve25519 work, while data of existing
 * sessions is never gated. Called from the socket thread for each handshake message; read from any.
 */
public final class HandshakeLoad {
    private final LongSupplier nanos;
    private final int threshold;
    private final long windowNanos;
    private final long holdNanos;
    private long windowStart;
    private int count;
    /** Until when we are under load; starts in the past (no sentinel: nanoTime differences must not overflow). */
    private volatile long loadedUntil;

    public HandshakeLoad(LongSupplier nanos, int threshold, long windowNanos, long holdNanos) {
        this.nanos = nanos;
        this.threshold = threshold;
        this.windowNanos = windowNanos;
        this.holdNanos = holdNanos;
        this.windowStart = nanos.getAsLong();
        this.loadedUntil = windowStart - 1;
    }

    /** 64 handshake messages per 100 ms, held for 1 s. */
    public static HandshakeLoad standard(LongSupplier nanos) {
        return new HandshakeLoad(nanos, 64, 100_000_000L, 1_000_000_000L);
    }

    /** One handshake message arrived. */
    public synchronized void arrived() {
        long now = nanos.getAsLong();
        if (now - windowStart >= windowNanos) {
            windowStart = now;
            count = 0;
        }
        if (++count > threshold) {
            loadedUntil = now + holdNanos;
        }
    }

    /**
     * The socket reader found {@code queued} handshake messages in one batch read: a backlog (the
     * queue wireguard-go measures). When handshakes cost more than they arrive at, the rate seen by
     * {@link #arrived} stays low while the socket fills; a batch with {@code threshold / 4} or more
     * of them says so.
     */
    public void backlog(int queued) {
        if (queued >= Math.max(1, threshold / 4)) {
            loadedUntil = nanos.getAsLong() + holdNanos;
        }
    }

    public boolean underLoad() {
        return nanos.getAsLong() - loadedUntil < 0;
    }
}
