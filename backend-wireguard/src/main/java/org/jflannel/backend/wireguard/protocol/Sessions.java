package org.jflannel.backend.wireguard.protocol;

import java.security.SecureRandom;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The receiver-index table (whitepaper §5.4: a handshake in flight or a keypair is known to the peer
 * by a random 32-bit index of ours) and how keypairs end: forgotten (index freed, keys wiped), or all
 * of a peer's zeroed. A concurrent map: the packet threads look indices up without a lock.
 */
final class Sessions {
    /** What an index names: a peer's handshake in flight ({@code keypair} null) or one of its keypairs. */
    record Index(Peer peer, Keypair keypair) {
    }

    private final Map<Integer, Index> indices = new ConcurrentHashMap<>();
    private final SecureRandom random;

    Sessions(SecureRandom random) {
        this.random = random;
    }

    Index get(int index) {
        return indices.get(index);
    }

    void put(int index, Index value) {
        indices.put(index, value);
    }

    void remove(int index) {
        indices.remove(index);
    }

    /** Removes {@code index} only while it still names {@code value}. */
    void remove(int index, Index value) {
        indices.remove(index, value);
    }

    /** A fresh non-zero index for {@code p}'s handshake ({@code kp} null) or keypair. */
    int newIndex(Peer p, Keypair kp) {
        while (true) {
            int i = random.nextInt();
            if (i != 0 && indices.putIfAbsent(i, new Index(p, kp)) == null) {
                return i;
            }
        }
    }

    /** Holding p: every keypair and the handshake of p gone (the peer removed, or its keys expired). */
    void zeroKeys(Peer p) {
        for (Keypair k : new Keypair[] {p.previous, p.current, p.next}) {
            if (k != null) {
                forget(k);
            }
        }
        p.previous = p.current = p.next = null;
        if (p.handshake.localIndex != 0) {
            indices.remove(p.handshake.localIndex);
        }
        p.handshake.zero();
        if (p.crossed.localIndex != 0) {
            indices.remove(p.crossed.localIndex);
        }
        p.crossed.zero();
    }

    /** Holding p: {@code kp} becomes current, the current one previous, the previous one forgotten. */
    void makeCurrent(Peer p, Keypair kp) {
        if (p.previous != null) {
            forget(p.previous);
        }
        p.previous = p.current;
        p.current = kp;
    }

    void forget(Keypair k) {
        indices.remove(k.localIndex);
        k.wipe();
    }
}
