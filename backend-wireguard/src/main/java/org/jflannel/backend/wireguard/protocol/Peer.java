package org.jflannel.backend.wireguard.protocol;

import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One peer: its keys, handshake, the three keypair slots (previous, current, next: the responder's
 * unconfirmed one), packets staged while no session is up, and the timer deadlines of whitepaper
 * §6 as wireguard-go names them. Everything is guarded by this object; the {@link Device} drives it.
 * Deadlines are {@link System#nanoTime}-style; {@link #OFF} is a timer not armed.
 */
public final class Peer {
    static final long OFF = Long.MAX_VALUE;
    static final int MAX_STAGED = 128;
    /** {@link #lastHandshakeEpochNanos} before a first handshake (as the kernel's 0 s 0 ns). */
    public static final long NEVER = 0;

    final byte[] publicKey;
    final byte[] precomputedStaticStatic;
    final Cookies.Generator cookies;
    final Noise.Handshake handshake = new Noise.Handshake();
    /**
     * Our initiation when the peer's crossed it and we answered theirs (ours has the higher key): kept so
     * that a plain WireGuard peer's answer to it completes it (see {@code Handshakes.onInitiation}).
     */
    final Noise.Handshake crossed = new Noise.Handshake();
    final ArrayDeque<byte[]> staged = new ArrayDeque<>();
    volatile byte[] psk;
    volatile Endpoint endpoint;
    volatile List<AllowedIp> allowedIps;
    volatile int persistentKeepaliveSeconds;

    Keypair previous;
    volatile Keypair current;
    Keypair next;

    long lastHandshakeSentNanos = Long.MIN_VALUE;
    /**
     * The initiation in flight was sent on learning the peer, not for traffic ({@link Handshakes#sendSpeculativeInitiation}):
     * the peer may not know us yet and drop it, so it neither holds back the next initiation that traffic asks for
     * nor wins a crossing.
     */
    boolean speculativeInitiation;
    /** When the initiation on learning the peer is due ({@link Device#initiateHandshake}); {@link #OFF} when none is. */
    long speculativeInitiationAt = OFF;
    long lastHandshakeCompletedNanos = Long.MIN_VALUE;
    /** The wall clock at the last completed handshake (epoch nanos), {@link #NEVER} before the first: what wg shows. */
    long lastHandshakeEpochNanos = NEVER;
    /**
     * Bytes of the messages received from and sent to this peer, as the kernel counts them (rx_bytes, tx_bytes):
     * data and keepalives whole (header, padded payload, tag; the data plane adds once per batch, {@link Tally},
     * not per packet) and the handshake messages; cookie replies are not a peer's.
     */
    final AtomicLong rxBytes = new AtomicLong();
    final AtomicLong txBytes = new AtomicLong();
    int handshakeAttempts;
    boolean needAnotherKeepalive;
    boolean sentLastMinuteHandshake;
    long retransmitHandshakeAt = OFF;
    long sendKeepaliveAt = OFF;
    long newHandshakeAt = OFF;
    long zeroKeysAt = OFF;
    long persistentKeepaliveAt = OFF;

    Peer(byte[] publicKey, byte[] precomputedStaticStatic, long cookieLifetimeNanos) {
        this.publicKey = publicKey.clone();
        this.precomputedStaticStatic = precomputedStaticStatic;
        this.cookies = new Cookies.Generator(publicKey, cookieLifetimeNanos);
    }

    public byte[] publicKey() {
        return publicKey.clone();
    }

    public Endpoint endpoint() {
        return endpoint;
    }

    public List<AllowedIp> allowedIps() {
        return allowedIps;
    }

    /** When the last handshake completed (the clock's nanos), or {@link Long#MIN_VALUE} never. */
    public synchronized long lastHandshakeNanos() {
        return lastHandshakeCompletedNanos;
    }

    /** The wall-clock time of the last completed handshake (epoch nanos), {@link #NEVER} before the first. */
    public synchronized long lastHandshakeEpochNanos() {
        return lastHandshakeEpochNanos;
    }

    /** Bytes of the messages received from this peer (see {@link #rxBytes}'s field). */
    public long rxBytes() {
        return rxBytes.get();
    }

    /** Bytes of the messages sent to this peer, as far as the socket took them. */
    public long txBytes() {
        return txBytes.get();
    }

    /** True when a session can carry data now (a current keypair exists). */
    public boolean hasSession() {
        return current != null;
    }

    @Override
    public String toString() {
        return java.util.Base64.getEncoder().encodeToString(publicKey);
    }
}
