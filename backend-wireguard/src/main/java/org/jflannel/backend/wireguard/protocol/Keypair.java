package org.jflannel.backend.wireguard.protocol;

import java.util.concurrent.atomic.AtomicLong;

/** The transport keys of one session: a send counter, and the receive window (guarded by this). */
final class Keypair {
    final byte[] sendKey;
    final byte[] receiveKey;
    final int localIndex;
    final int remoteIndex;
    final boolean initiator;
    final long createdNanos;
    final AtomicLong sendCounter = new AtomicLong();
    private final ReplayWindow window = new ReplayWindow();

    Keypair(Noise.SessionKeys k, long createdNanos) {
        this.sendKey = k.send();
        this.receiveKey = k.receive();
        this.localIndex = k.localIndex();
        this.remoteIndex = k.remoteIndex();
        this.initiator = k.initiator();
        this.createdNanos = createdNanos;
    }

    synchronized boolean acceptCounter(long counter, long limit) {
        return window.accept(counter, limit);
    }

    void wipe() {
        java.util.Arrays.fill(sendKey, (byte) 0);
        java.util.Arrays.fill(receiveKey, (byte) 0);
    }
}
