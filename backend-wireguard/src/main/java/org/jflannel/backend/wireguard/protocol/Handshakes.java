package org.jflannel.backend.wireguard.protocol;

import static org.jflannel.backend.wireguard.protocol.Messages.*;

import java.security.SecureRandom;
import java.time.Instant;
import java.util.Arrays;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The handshake messages (whitepaper §5.4, §5.4.7): our initiations out (rate-limited, with
 * monotonic TAI64N timestamps), and in: initiations answered with a response (the new keypair waits
 * in "next" until confirmed), responses that make a session current, cookie replies; before any of
 * them the gate of mac1 and, under load, mac2 (a cookie reply instead of the work) and a rate per source address.
 */
final class Handshakes {
    /** The device's log lines stay under its name. */
    private static final Logger LOG = LoggerFactory.getLogger(Device.class);
    /** wireguard-go's HandshakeInitationRate: at most one initiation per peer consumed per 20 ms. */
    private static final long INITIATION_MIN_INTERVAL_NANOS = 20_000_000L;

    private final byte[] privateKey;
    private final byte[] publicKey;
    private final Timings timings;
    private final LongSupplier nanos;
    private final Supplier<Instant> wallClock;
    private final SecureRandom random;
    private final Device.Wire wire;
    private final BooleanSupplier underLoad;
    private final Runnable handshakeArrived;
    private final Counters counters;
    private final Cookies.Checker cookieChecker;
    private final RateLimiter rateLimiter = new RateLimiter();
    private final ThreadLocal<Noise> noise;
    private final Peers peers;
    private final Sessions sessions;
    private final Timers timers;
    private byte[] lastTimestamp = new byte[12];
    /** Tests: behave as a plain WireGuard (the kernel's, wireguard-go) on crossed initiations (see {@link Device#behaveAsPlainWireguard}). */
    private volatile boolean plain;

    /** @param privateKey our static key (the device's copy), {@code publicKey} its public half */
    Handshakes(byte[] privateKey, byte[] publicKey, Device.Config config, Device.Wire wire, Counters counters,
            PerThread perThread, Peers peers, Sessions sessions, Timers timers) {
        this.privateKey = privateKey;
        this.publicKey = publicKey;
        this.timings = config.timings();
        this.nanos = config.nanos();
        this.wallClock = config.wallClock();
        this.random = config.random();
        this.wire = wire;
        this.underLoad = config.underLoad();
        this.handshakeArrived = config.handshakeArrived();
        this.counters = counters;
        this.cookieChecker = new Cookies.Checker(publicKey, timings.cookieRefreshTime().toNanos(), random);
        this.noise = perThread.noise;
        this.peers = peers;
        this.sessions = sessions;
        this.timers = timers;
    }

    // ---------------------------------------------------------------- out

    /** Holding p: a handshake initiation, unless one went out less than REKEY_TIMEOUT ago (and this is no retry). */
    void sendInitiation(Peer p, long now, boolean retry) {
        if (!retry && !p.speculativeInitiation && p.lastHandshakeSentNanos != Long.MIN_VALUE
                && now - p.lastHandshakeSentNanos < timings.rekeyTimeout().toNanos()) {
            return;
        }
        if (p.endpoint == null) {
            return;
        }
        p.speculativeInitiation = false;
        if (!retry) {
            p.handshakeAttempts = 0;
        }
        p.lastHandshakeSentNanos = now;
        if (p.handshake.localIndex != 0) {
            sessions.remove(p.handshake.localIndex, new Sessions.Index(p, null));
        }
        discardCrossed(p); // a new initiation supersedes one kept from a crossing
        int index = sessions.newIndex(p, null);
        byte[] msg = new byte[INITIATION_SIZE];
        noise.get().createInitiation(p.handshake, privateKey, publicKey, p.publicKey, p.precomputedStaticStatic,
                timestamp(), index, random, msg);
        p.cookies.addMacs(msg, 0, INITIATION_SIZE, now);
        counters.handshakesInitiated.increment();
        LOG.debug("wireguard handshake initiation peer={} endpoint={} retry={}", p, p.endpoint, retry);
        wire.send(msg, 0, INITIATION_SIZE, p.endpoint);
        p.txBytes.addAndGet(INITIATION_SIZE); // handshakes count in a peer's bytes, as the kernel's tx_bytes
        timers.anyAuthenticatedPacketTraversal(p, now);
        p.sendKeepaliveAt = Peer.OFF;
        p.retransmitHandshakeAt = now + timings.rekeyTimeout().toNanos() + timers.jitter();
    }

    /**
     * Holding p: an initiation on learning the peer, before traffic asks for one (a restarted node's peers still
     * hold a session with its previous run). The peer may not know us yet (its lease events lag ours) and drop
     * it: so traffic's next initiation goes at once instead of waiting REKEY_TIMEOUT for this one, and a crossing
     * initiation from the peer is answered rather than ignored (found by WireguardTwoNodesIT: the first echo of a
     * new pair waited 5 s for the retry).
     */
    void sendSpeculativeInitiation(Peer p, long now) {
        if (p.lastHandshakeSentNanos != Long.MIN_VALUE && now - p.lastHandshakeSentNanos < timings.rekeyTimeout().toNanos()) {
            return;
        }
        long before = counters.handshakesInitiated.sum();
        sendInitiation(p, now, false);
        if (counters.handshakesInitiated.sum() != before) {
            p.speculativeInitiation = true;
            counters.handshakesSpeculative.increment();
        }
    }

    /** TAI64N now, strictly above the last we sent (two initiations within the whitening interval stay ordered). */
    private synchronized byte[] timestamp() {
        Instant t = wallClock.get();
        byte[] ts = Noise.tai64n(t.getEpochSecond(), t.getNano());
        if (Arrays.compareUnsigned(ts, lastTimestamp) <= 0) {
            ts = lastTimestamp.clone();
            for (int i = 11; i >= 0 && ++ts[i] == 0; i--) {
                // carry
            }
        }
        lastTimestamp = ts;
        return ts.clone();
    }

    // ---------------------------------------------------------------- in

    /**
     * mac1 always; under load a valid mac2 too, else a cookie reply goes back and the message is
     * dropped, and then a place in its source address's rate (20 a second, 5 at once: {@link RateLimiter}).
     */
    boolean gate(byte[] msg, int off, int len, Endpoint from) {
        handshakeArrived.run();
        if (!cookieChecker.mac1Valid(msg, off, len)) {
            counters.droppedBadMac.increment();
            return false;
        }
        if (underLoad.getAsBoolean()) {
            byte[] source = from.cookieSource();
            long now = nanos.getAsLong();
            if (!cookieChecker.mac2Valid(msg, off, len, source, now)) {
                byte[] reply = cookieChecker.reply(msg, off, len, source, now);
                counters.cookieRepliesSent.increment();
                wire.send(reply, 0, reply.length, from);
                return false;
            }
            if (!rateLimiter.allow(from, now)) {
                counters.droppedRateLimited.increment();
                return false;
            }
        }
        return true;
    }

    void onInitiation(byte[] msg, int off, Endpoint from) {
        Noise n = noise.get();
        Optional<Noise.Initiation> init = n.consumeInitiation(msg, off, privateKey, publicKey);
        Peer p = init.map(i -> peers.get(i.initiatorStatic())).orElse(null);
        if (p == null) {
            counters.droppedBadHandshake.increment();
            return;
        }
        long now = nanos.getAsLong();
        synchronized (p) {
            if (crossedAndOurInitiationWins(p, now)) {
                // both sides initiated at once: taking theirs would void ours and theirs (each side's
                // response names an initiation the other dropped), and the session would wait for a
                // retry 5 s later; the side with the lower public key keeps its own, the other answers
                counters.crossedInitiationsIgnored.increment();
                return;
            }
            int pending = p.handshake.localIndex;
            // ours, crossed by theirs, kept aside: a plain WireGuard peer (the kernel's, wireguard-go) answers it
            // and drops its own, so its answer to ours is the one that completes; one of ours yields instead
            boolean keep = !plain && p.handshake.state() == Noise.State.INITIATION_CREATED;
            if (keep) {
                discardCrossed(p);
                p.crossed.copyInitiation(p.handshake);
            }
            if (!n.acceptInitiation(p.handshake, init.get(), p.precomputedStaticStatic, now, INITIATION_MIN_INTERVAL_NANOS)) {
                if (keep) {
                    p.crossed.zero(); // ours is still in p.handshake
                }
                counters.droppedBadHandshake.increment();
                return;
            }
            if (pending != 0 && !keep) {
                sessions.remove(pending, new Sessions.Index(p, null)); // our own initiation is void now
            }
            p.endpoint = from;
            p.rxBytes.addAndGet(INITIATION_SIZE);
            timers.anyAuthenticatedPacketTraversal(p, now);
            p.newHandshakeAt = Peer.OFF; // any authenticated packet received
            int index = sessions.newIndex(p, null);
            byte[] resp = new byte[RESPONSE_SIZE];
            if (!n.createResponse(p.handshake, p.publicKey, p.psk, index, random, resp)) {
                sessions.remove(index);
                counters.droppedBadHandshake.increment();
                return;
            }
            p.cookies.addMacs(resp, 0, RESPONSE_SIZE, now);
            Keypair kp = new Keypair(Noise.deriveKeys(p.handshake), now);
            sessions.put(index, new Sessions.Index(p, kp));
            // responder: the new keypair waits in "next" until the initiator's first data confirms it
            if (p.next != null) {
                sessions.forget(p.next);
            }
            p.next = kp;
            if (p.previous != null) {
                sessions.forget(p.previous);
                p.previous = null;
            }
            p.zeroKeysAt = now + 3 * timings.rejectAfterTime().toNanos();
            LOG.debug("wireguard handshake response peer={} endpoint={}", p, from);
            wire.send(resp, 0, RESPONSE_SIZE, from);
            p.txBytes.addAndGet(RESPONSE_SIZE);
            p.sendKeepaliveAt = Peer.OFF;
        }
    }

    /** Holding p: an initiation of ours kept from a crossing forgotten, with its index. */
    private void discardCrossed(Peer p) {
        if (p.crossed.localIndex != 0) {
            sessions.remove(p.crossed.localIndex, new Sessions.Index(p, null));
        }
        p.crossed.zero();
    }

    void behaveAsPlainWireguard() {
        plain = true;
    }

    /** Holding p: our own initiation to p is in flight (younger than REKEY_TIMEOUT) and our key is the lower. */
    private boolean crossedAndOurInitiationWins(Peer p, long now) {
        return !plain && p.handshake.state() == Noise.State.INITIATION_CREATED && !p.speculativeInitiation
                && now - p.lastHandshakeSentNanos < timings.rekeyTimeout().toNanos()
                && Arrays.compareUnsigned(publicKey, p.publicKey) < 0;
    }

    /**
     * A response to our initiation: its keypair becomes current at once (we are the initiator).
     * Returns the peer whose session just came up, which the caller confirms to the responder with
     * data or a keepalive; null when the response was not for us (counted).
     */
    Peer onResponse(byte[] msg, int off, Endpoint from) {
        Sessions.Index idx = sessions.get(u32(msg, off + RESP_RECEIVER));
        if (idx == null || idx.keypair() != null) {
            counters.droppedUnknownIndex.increment();
            return null;
        }
        Peer p = idx.peer();
        long now = nanos.getAsLong();
        int receiver = u32(msg, off + RESP_RECEIVER);
        synchronized (p) {
            Noise.Handshake hs = p.handshake.localIndex == receiver ? p.handshake
                    : p.crossed.localIndex == receiver ? p.crossed : null; // an answer to ours that theirs crossed
            if (hs == null || !noise.get().consumeResponse(hs, msg, off, privateKey, p.psk)) {
                counters.droppedBadHandshake.increment();
                return null;
            }
            Keypair kp = new Keypair(Noise.deriveKeys(hs), now);
            sessions.put(kp.localIndex, new Sessions.Index(p, kp));
            // initiator: the new keypair is current at once; the old current becomes previous
            if (p.next != null) {
                if (p.previous != null) {
                    sessions.forget(p.previous);
                }
                p.previous = p.next;
                p.next = null;
                if (p.current != null) {
                    sessions.forget(p.current);
                }
                p.current = kp;
            } else {
                sessions.makeCurrent(p, kp);
            }
            p.endpoint = from;
            p.rxBytes.addAndGet(RESPONSE_SIZE);
            timers.handshakeComplete(p, now);
            p.zeroKeysAt = now + 3 * timings.rejectAfterTime().toNanos();
            timers.anyAuthenticatedPacketTraversal(p, now);
            p.newHandshakeAt = Peer.OFF;
            LOG.info("wireguard session up peer={} endpoint={} role=initiator", p, from);
        }
        return p;
    }

    void onCookieReply(byte[] msg, int off) {
        Sessions.Index idx = sessions.get(u32(msg, off + COOKIE_RECEIVER));
        if (idx == null) {
            counters.droppedUnknownIndex.increment();
            return;
        }
        if (idx.peer().cookies.consumeReply(msg, off, nanos.getAsLong())) {
            counters.cookieRepliesReceived.increment();
        } else {
            counters.droppedBadMac.increment();
        }
    }
}
