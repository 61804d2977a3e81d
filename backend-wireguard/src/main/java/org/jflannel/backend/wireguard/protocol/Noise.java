package org.jflannel.backend.wireguard.protocol;

import static org.jflannel.backend.wireguard.protocol.Messages.*;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.Arrays;
import java.util.Optional;
import org.jflannel.backend.wireguard.crypto.Blake2s;
import org.jflannel.backend.wireguard.crypto.ChaChaPoly;
import org.jflannel.backend.wireguard.crypto.Kdf;
import org.jflannel.backend.wireguard.crypto.X25519;

/**
 * Noise_IKpsk2_25519_ChaChaPoly_BLAKE2s as WireGuard runs it (whitepaper §5.4.2–5.4.4): the four
 * steps of one handshake on a {@link Handshake} state, and the transport keys it yields. Pure:
 * randomness and time come in as arguments. mac1/mac2 are {@link Cookies}' business.
 */
public final class Noise {
    static final byte[] CONSTRUCTION = "Noise_IKpsk2_25519_ChaChaPoly_BLAKE2s".getBytes(StandardCharsets.US_ASCII);
    static final byte[] IDENTIFIER = "WireGuard v1 zx2c4 Jason@zx2c4.com".getBytes(StandardCharsets.US_ASCII);
    static final byte[] INITIAL_CHAIN_KEY = Blake2s.hash(CONSTRUCTION);
    static final byte[] INITIAL_HASH = Blake2s.hash(INITIAL_CHAIN_KEY, IDENTIFIER);
    private static final byte[] EMPTY = new byte[0];
    private static final byte[] ZERO_KEY = new byte[32];

    public enum State { ZEROED, INITIATION_CREATED, INITIATION_CONSUMED, RESPONSE_CREATED, RESPONSE_CONSUMED }

    /** One peer's handshake in progress (guarded by the peer). */
    public static final class Handshake {
        State state = State.ZEROED;
        byte[] hash;
        byte[] chainKey;
        byte[] localEphemeral;
        byte[] remoteEphemeral;
        int localIndex;
        int remoteIndex;
        /** The greatest TAI64N timestamp seen in an initiation from this peer (replayed initiations are dropped). */
        byte[] lastTimestamp = new byte[12];
        long lastInitiationConsumedNanos = Long.MIN_VALUE;

        void zero() {
            state = State.ZEROED;
            wipe(hash);
            wipe(chainKey);
            wipe(localEphemeral);
            hash = chainKey = localEphemeral = remoteEphemeral = null;
            localIndex = remoteIndex = 0;
        }

        /** This becomes a copy of {@code o}'s initiation in flight (the initiator's fields; arrays copied: {@link #zero} wipes them). */
        void copyInitiation(Handshake o) {
            zero();
            state = o.state;
            hash = o.hash.clone();
            chainKey = o.chainKey.clone();
            localEphemeral = o.localEphemeral.clone();
            localIndex = o.localIndex;
        }

        public State state() {
            return state;
        }

        public int localIndex() {
            return localIndex;
        }
    }

    /** What a consumed initiation says: who sent it (static key), and the state to answer with. */
    public record Initiation(byte[] initiatorStatic, byte[] timestamp, int senderIndex, byte[] ephemeral, byte[] hash,
            byte[] chainKey) {
    }

    /** Keys derived at the end of a handshake. */
    public record SessionKeys(byte[] send, byte[] receive, int localIndex, int remoteIndex, boolean initiator) {
    }

    private final ChaChaPoly aead = new ChaChaPoly();

    /**
     * Initiator, step 1: fills {@code out[0, 116)} (mac1/mac2 left to the caller) and moves
     * {@code hs} to INITIATION_CREATED.
     */
    public void createInitiation(Handshake hs, byte[] localPrivate, byte[] localPublic, byte[] remoteStatic,
            byte[] precomputedStaticStatic, byte[] timestamp, int localIndex, SecureRandom random, byte[] out) {
        byte[] h = Blake2s.hash(INITIAL_HASH, remoteStatic);
        byte[] c = INITIAL_CHAIN_KEY;
        byte[] ePriv = X25519.generatePrivate(random);
        byte[] ePub = X25519.publicKey(ePriv);
        Arrays.fill(out, 0, INITIATION_SIZE, (byte) 0);
        u32(out, 0, INITIATION);
        u32(out, INIT_SENDER, localIndex);
        System.arraycopy(ePub, 0, out, INIT_EPHEMERAL, 32);
        c = Kdf.kdf(1, c, ePub)[0];
        h = Blake2s.hash(h, ePub);
        byte[] es = X25519.dh(ePriv, remoteStatic).orElseThrow(() -> new IllegalArgumentException("peer public key has small order"));
        byte[][] ck = Kdf.kdf(2, c, es);
        c = ck[0];
        byte[] encStatic = aead.seal(ck[1], 0, localPublic, h);
        System.arraycopy(encStatic, 0, out, INIT_STATIC, 48);
        h = Blake2s.hash(h, encStatic);
        ck = Kdf.kdf(2, c, precomputedStaticStatic);
        c = ck[0];
        byte[] encTime = aead.seal(ck[1], 0, timestamp, h);
        System.arraycopy(encTime, 0, out, INIT_TIMESTAMP, 28);
        h = Blake2s.hash(h, encTime);
        hs.zero();
        hs.hash = h;
        hs.chainKey = c;
        hs.localEphemeral = ePriv;
        hs.localIndex = localIndex;
        hs.state = State.INITIATION_CREATED;
    }

    /**
     * Responder, step 2: authenticates an initiation (mac1 already checked) with our static key.
     * Empty when it does not decrypt. The timestamp and flood checks need the peer, found by the
     * returned static key: {@link #acceptInitiation}.
     */
    public Optional<Initiation> consumeInitiation(byte[] msg, int off, byte[] localPrivate, byte[] localPublic) {
        byte[] ePub = slice(msg, off + INIT_EPHEMERAL, 32);
        byte[] h = Blake2s.hash(INITIAL_HASH, localPublic);
        byte[] c = Kdf.kdf(1, INITIAL_CHAIN_KEY, ePub)[0];
        h = Blake2s.hash(h, ePub);
        Optional<byte[]> es = X25519.dh(localPrivate, ePub);
        if (es.isEmpty()) {
            return Optional.empty();
        }
        byte[][] ck = Kdf.kdf(2, c, es.get());
        c = ck[0];
        byte[] encStatic = slice(msg, off + INIT_STATIC, 48);
        Optional<byte[]> peerStatic = aead.open(ck[1], 0, encStatic, h);
        if (peerStatic.isEmpty()) {
            return Optional.empty();
        }
        h = Blake2s.hash(h, encStatic);
        // the static-static DH and the timestamp need the peer's key: continued in acceptInitiation
        return Optional.of(new Initiation(peerStatic.get(), slice(msg, off + INIT_TIMESTAMP, 28), u32(msg, off + INIT_SENDER),
                ePub, h, c));
    }

    /**
     * Responder, step 2 continued for the peer the static key named: decrypts the timestamp with the
     * static-static secret, refuses one not newer than the last (a replayed initiation), and moves
     * {@code hs} to INITIATION_CONSUMED. False: drop.
     */
    public boolean acceptInitiation(Handshake hs, Initiation init, byte[] precomputedStaticStatic, long nowNanos,
            long minIntervalNanos) {
        byte[][] ck = Kdf.kdf(2, init.chainKey(), precomputedStaticStatic);
        Optional<byte[]> ts = aead.open(ck[1], 0, init.timestamp(), init.hash());
        if (ts.isEmpty()) {
            return false;
        }
        boolean replay = Arrays.compareUnsigned(ts.get(), hs.lastTimestamp) <= 0;
        boolean flood = hs.lastInitiationConsumedNanos != Long.MIN_VALUE && nowNanos - hs.lastInitiationConsumedNanos < minIntervalNanos;
        if (replay || flood) {
            return false;
        }
        hs.zero();
        hs.hash = Blake2s.hash(init.hash(), init.timestamp());
        hs.chainKey = ck[0];
        hs.remoteEphemeral = init.ephemeral();
        hs.remoteIndex = init.senderIndex();
        hs.lastTimestamp = ts.get();
        hs.lastInitiationConsumedNanos = nowNanos;
        hs.state = State.INITIATION_CONSUMED;
        return true;
    }

    /** Responder, step 3: fills {@code out[0, 60)} and moves {@code hs} to RESPONSE_CREATED. */
    public boolean createResponse(Handshake hs, byte[] remoteStatic, byte[] psk, int localIndex, SecureRandom random, byte[] out) {
        if (hs.state != State.INITIATION_CONSUMED) {
            return false;
        }
        byte[] ePriv = X25519.generatePrivate(random);
        byte[] ePub = X25519.publicKey(ePriv);
        Arrays.fill(out, 0, RESPONSE_SIZE, (byte) 0);
        u32(out, 0, RESPONSE);
        u32(out, RESP_SENDER, localIndex);
        u32(out, RESP_RECEIVER, hs.remoteIndex);
        System.arraycopy(ePub, 0, out, RESP_EPHEMERAL, 32);
        byte[] c = Kdf.kdf(1, hs.chainKey, ePub)[0];
        byte[] h = Blake2s.hash(hs.hash, ePub);
        Optional<byte[]> ee = X25519.dh(ePriv, hs.remoteEphemeral);
        Optional<byte[]> se = X25519.dh(ePriv, remoteStatic);
        if (ee.isEmpty() || se.isEmpty()) {
            return false;
        }
        c = Kdf.kdf(1, c, ee.get())[0];
        c = Kdf.kdf(1, c, se.get())[0];
        byte[][] ctk = Kdf.kdf(3, c, psk == null ? ZERO_KEY : psk);
        c = ctk[0];
        h = Blake2s.hash(h, ctk[1]);
        byte[] empty = aead.seal(ctk[2], 0, EMPTY, h);
        System.arraycopy(empty, 0, out, RESP_EMPTY, 16);
        h = Blake2s.hash(h, empty);
        hs.hash = h;
        hs.chainKey = c;
        hs.localEphemeral = ePriv;
        hs.localIndex = localIndex;
        hs.state = State.RESPONSE_CREATED;
        return true;
    }

    /** Initiator, step 4: authenticates a response to our initiation (mac1 already checked); RESPONSE_CONSUMED. */
    public boolean consumeResponse(Handshake hs, byte[] msg, int off, byte[] localPrivate, byte[] psk) {
        if (hs.state != State.INITIATION_CREATED) {
            return false;
        }
        byte[] ePub = slice(msg, off + RESP_EPHEMERAL, 32);
        byte[] c = Kdf.kdf(1, hs.chainKey, ePub)[0];
        byte[] h = Blake2s.hash(hs.hash, ePub);
        Optional<byte[]> ee = X25519.dh(hs.localEphemeral, ePub);
        Optional<byte[]> se = X25519.dh(localPrivate, ePub);
        if (ee.isEmpty() || se.isEmpty()) {
            return false;
        }
        c = Kdf.kdf(1, c, ee.get())[0];
        c = Kdf.kdf(1, c, se.get())[0];
        byte[][] ctk = Kdf.kdf(3, c, psk == null ? ZERO_KEY : psk);
        c = ctk[0];
        h = Blake2s.hash(h, ctk[1]);
        byte[] empty = slice(msg, off + RESP_EMPTY, 16);
        if (aead.open(ctk[2], 0, empty, h).isEmpty()) {
            return false;
        }
        hs.hash = Blake2s.hash(h, empty);
        hs.chainKey = c;
        hs.remoteIndex = u32(msg, off + RESP_SENDER);
        hs.state = State.RESPONSE_CONSUMED;
        return true;
    }

    /** The transport keys of a finished handshake; the handshake state is wiped. */
    public static SessionKeys deriveKeys(Handshake hs) {
        boolean initiator = hs.state == State.RESPONSE_CONSUMED;
        if (!initiator && hs.state != State.RESPONSE_CREATED) {
            throw new IllegalStateException("no finished handshake: " + hs.state);
        }
        byte[][] k = Kdf.kdf(2, hs.chainKey, EMPTY);
        SessionKeys keys = initiator
                ? new SessionKeys(k[0], k[1], hs.localIndex, hs.remoteIndex, true)
                : new SessionKeys(k[1], k[0], hs.localIndex, hs.remoteIndex, false);
        byte[] ts = hs.lastTimestamp;
        long consumed = hs.lastInitiationConsumedNanos;
        hs.zero();
        hs.lastTimestamp = ts;
        hs.lastInitiationConsumedNanos = consumed;
        return keys;
    }

    /** TAI64N of a wall-clock instant, nanoseconds whitened to 2^24 ns as wireguard-go does (no fine timing leak). */
    public static byte[] tai64n(long epochSeconds, int nanos) {
        byte[] t = new byte[12];
        long secs = 0x400000000000000aL + epochSeconds;
        int n = nanos & ~0xffffff;
        for (int i = 0; i < 8; i++) {
            t[i] = (byte) (secs >>> (56 - 8 * i));
        }
        for (int i = 0; i < 4; i++) {
            t[8 + i] = (byte) (n >>> (24 - 8 * i));
        }
        return t;
    }

    static boolean equal(byte[] a, byte[] b) {
        return MessageDigest.isEqual(a, b);
    }

    static void wipe(byte[] b) {
        if (b != null) {
            Arrays.fill(b, (byte) 0);
        }
    }
}
