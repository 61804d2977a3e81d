package org.jflannel.backend.wireguard.protocol;

import java.time.Instant;
import java.util.Collection;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The protocol's timers (whitepaper §6, named as wireguard-go names them): what an event arms or
 * disarms on a peer (a packet sent or received, a handshake completed), and the {@link #tick} that
 * fires what is due: handshake retries and giving up, keepalives, a new handshake after silence,
 * key expiry, persistent keepalives. Deadlines live in the {@link Peer}, guarded by it.
 */
final class Timers {
    /** The device's log lines stay under its name. */
    private static final Logger LOG = LoggerFactory.getLogger(Device.class);
    private static final long JITTER_NANOS = 333_000_000L;

    private final Timings timings;
    private final LongSupplier nanos;
    private final Supplier<Instant> wallClock;
    private final Counters counters;

    Timers(Timings timings, LongSupplier nanos, Supplier<Instant> wallClock, Counters counters) {
        this.timings = timings;
        this.nanos = nanos;
        this.wallClock = wallClock;
        this.counters = counters;
    }

    /** Runs every peer's due timers: handshake retries, keepalives, rekeys, key expiry. */
    void tick(Collection<Peer> peers, Handshakes handshakes, Transport transport, Sessions sessions) {
        long now = nanos.getAsLong();
        for (Peer p : peers) {
            boolean keepalive = false;
            synchronized (p) {
                if (now >= p.speculativeInitiationAt) {
                    p.speculativeInitiationAt = Peer.OFF;
                    if (p.current == null) {
                        handshakes.sendSpeculativeInitiation(p, now);
                    }
                }
                if (now >= p.retransmitHandshakeAt) {
                    p.retransmitHandshakeAt = Peer.OFF;
                    if (p.handshakeAttempts >= timings.maxHandshakeAttempts()) {
                        LOG.info("wireguard handshake gave up peer={} attempts={}", p, p.handshakeAttempts);
                        p.staged.clear();
                        if (p.zeroKeysAt == Peer.OFF) {
                            p.zeroKeysAt = now + 3 * timings.rejectAfterTime().toNanos();
                        }
                    } else {
                        p.handshakeAttempts++;
                        handshakes.sendInitiation(p, now, true);
                    }
                }
                if (now >= p.sendKeepaliveAt) {
                    p.sendKeepaliveAt = Peer.OFF;
                    keepalive = true;
                    if (p.needAnotherKeepalive) {
                        p.needAnotherKeepalive = false;
                        p.sendKeepaliveAt = now + timings.keepaliveTimeout().toNanos();
                    }
                }
                if (now >= p.newHandshakeAt) {
                    // we sent data and heard nothing back for KEEPALIVE + REKEY_TIMEOUT: the session may be dead
                    p.newHandshakeAt = Peer.OFF;
                    handshakes.sendInitiation(p, now, false);
                }
                if (now >= p.zeroKeysAt) {
                    p.zeroKeysAt = Peer.OFF;
                    sessions.zeroKeys(p);
                }
                if (now >= p.persistentKeepaliveAt) {
                    p.persistentKeepaliveAt = Peer.OFF;
                    keepalive = true;
                }
            }
            if (keepalive) {
                transport.sendKeepalive(p);
            }
        }
    }

    /** Holding p: any authenticated packet sent or received re-arms the persistent keepalive. */
    void anyAuthenticatedPacketTraversal(Peer p, long now) {
        int k = p.persistentKeepaliveSeconds;
        if (k > 0) {
            p.persistentKeepaliveAt = now + k * 1_000_000_000L;
        }
    }

    /** Holding p: data sent; unless an answer comes within KEEPALIVE + REKEY_TIMEOUT, a new handshake. */
    void dataSent(Peer p, long now) {
        if (p.newHandshakeAt == Peer.OFF) {
            p.newHandshakeAt = now + timings.keepaliveTimeout().toNanos() + timings.rekeyTimeout().toNanos() + jitter();
        }
    }

    /** Holding p: a session came up, the retries stop. */
    void handshakeComplete(Peer p, long now) {
        p.retransmitHandshakeAt = Peer.OFF;
        p.handshakeAttempts = 0;
        p.sentLastMinuteHandshake = false;
        p.lastHandshakeCompletedNanos = now;
        Instant wall = wallClock.get(); // once per handshake: for wg's "latest handshake", which the monotonic clock cannot say
        p.lastHandshakeEpochNanos = wall.getEpochSecond() * 1_000_000_000L + wall.getNano();
        counters.handshakesCompleted.increment();
    }

    /**
     * Up to a third of a second, so that peers' timers drift apart (wireguard-go draws it from a fast,
     * non-cryptographic generator too). Not the device's {@code SecureRandom}: this runs on the packet
     * thread for the first packet sent after each one received, and a draw there read /dev/urandom and
     * ran SHA-1 (docs/benchmarks.md, "wireguard, session 13"). The drawing thread's own generator.
     */
    long jitter() {
        return ThreadLocalRandom.current().nextLong(JITTER_NANOS);
    }
}
