package org.jflannel.backend.wireguard.protocol;

import java.security.SecureRandom;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.jflannel.backend.wireguard.crypto.X25519;

/**
 * A userspace WireGuard interface without its I/O: peers by public key, the receiver-index table,
 * cryptokey routing (allowed IPs), and the message handling and timers of whitepaper §5–6. The
 * data plane feeds it packets from the TUN ({@link #seal}/{@link #sendPacket}) and datagrams from
 * the socket ({@link #receive}), calls {@link #tick} a few times a second, and gets back what to put
 * on the wire and into the TUN through {@link Wire}. Time and randomness are injected, so the
 * protocol runs in tests without a clock or a network.
 *
 * <p>This class is the facade; each job is a class of its own: {@link Peers} (peers and cryptokey
 * routing), {@link Sessions} (receiver indices, keypairs forgotten), {@link Handshakes} (handshake
 * messages out and in, the cookie gate), {@link Transport} (data sealed and sent, staging, keepalives),
 * {@link Receiver} (datagrams dispatched, data opened and delivered), {@link Timers} (whitepaper §6).
 *
 * <p>Threads: any number may call in. Peer state is guarded by the peer; the index table is a
 * concurrent map; decryption runs outside any lock; each thread has its own cipher objects ({@link PerThread}).
 */
public final class Device {

    /** Where the device's output goes. */
    public interface Wire {
        /** A WireGuard message to put on the wire (the array may be reused after the call). */
        void send(byte[] datagram, int off, int len, Endpoint to);

        /** A decrypted, authenticated inner IP packet for the TUN. */
        void deliver(byte[] packet, int off, int len);
    }

    /** The protocol's configuration: keys, timings, clocks, randomness, the MTU for padding, and when we are under load. */
    public record Config(byte[] privateKey, Timings timings, LongSupplier nanos, Supplier<Instant> wallClock,
            SecureRandom random, int mtu, BooleanSupplier underLoad, Runnable handshakeArrived) {

        /** With {@code load} deciding when we are under load. */
        public static Config withLoadDetector(byte[] privateKey, Timings timings, LongSupplier nanos,
                Supplier<Instant> wallClock, SecureRandom random, int mtu, HandshakeLoad load) {
            return new Config(privateKey, timings, nanos, wallClock, random, mtu, load::underLoad, load::arrived);
        }
    }

    /** A packet's place in its session: the keypair and the counter reserved for it. Mutable, reused by a data plane. */
    public static final class Reservation {
        Keypair keypair;
        long counter;
    }

    /** A data message opened by {@link #open}: its session and counter, and the plaintext's length. Mutable, reused by a data plane. */
    public static final class Opened {
        Sessions.Index index;
        long counter;
        int length;
    }

    private final byte[] publicKey;
    private final Counters counters = new Counters();
    private final Sessions sessions;
    private final Peers peers;
    private final Timers timers;
    private final Handshakes handshakes;
    private final Transport transport;
    private final Receiver receiver;
    private final LongSupplier nanos;

    public Device(Config config, Wire wire) {
        this.nanos = config.nanos();
        byte[] privateKey = config.privateKey().clone();
        this.publicKey = X25519.publicKey(privateKey);
        PerThread perThread = new PerThread();
        this.sessions = new Sessions(config.random());
        this.peers = new Peers(privateKey, config.timings(), counters, sessions);
        this.timers = new Timers(config.timings(), config.nanos(), config.wallClock(), counters);
        this.handshakes = new Handshakes(privateKey, publicKey, config, wire, counters, perThread, peers, sessions, timers);
        this.transport = new Transport(config, wire, counters, perThread, handshakes, timers);
        this.receiver = new Receiver(config, wire, counters, perThread, handshakes, transport, sessions, peers, timers);
    }

    public byte[] publicKey() {
        return publicKey.clone();
    }

    public Counters counters() {
        return counters;
    }

    // ---------------------------------------------------------------- peers

    /** Adds a peer or updates one with this key (its sessions kept, as {@code wg set} does). */
    public Peer setPeer(byte[] peerPublic, byte[] psk, Endpoint endpoint, List<AllowedIp> allowedIps, int keepaliveSeconds) {
        return peers.set(peerPublic, psk, endpoint, allowedIps, keepaliveSeconds, transport::sendKeepalive);
    }

    /**
     * A handshake initiation to {@code p} a second from now (on the timers' tick), unless a session is up by then or one went out less than REKEY_TIMEOUT ago (retried
     * on the protocol's timers until answered or given up): for a peer just learnt of. After our restart a
     * peer still holds a session with our previous run and sends on it (we drop it: its index is unknown
     * here) until its own timers make it initiate, 15 s later; our initiation moves it to a new session
     * now. When it initiates at the same moment the crossing resolves ({@code Handshakes.onInitiation}).
     */
    public void initiateHandshake(Peer p) {
        synchronized (p) {
            if (p.current == null && p.speculativeInitiationAt == Peer.OFF) {
                // a moment later, not now: a node that is new to the peer is learnt of by the peer a little after
                // it learns the peer (lease events), and traffic in between makes its own handshake
                p.speculativeInitiationAt = now() + SPECULATIVE_DELAY_NANOS;
            }
        }
    }

    /** How long after learning a peer its initiation waits ({@link #initiateHandshake}). */
    static final long SPECULATIVE_DELAY_NANOS = 1_000_000_000L;

    public Optional<Peer> peer(byte[] peerPublic) {
        return Optional.ofNullable(peers.get(peerPublic));
    }

    public List<Peer> peers() {
        return List.copyOf(peers.live());
    }

    public void removePeer(byte[] peerPublic) {
        peers.remove(peerPublic);
    }

    /** The peer whose IPv4 allowed IPs hold {@code ip}, longest prefix first. */
    public Peer route(int ip) {
        return peers.route(ip);
    }

    /** The peer whose IPv6 allowed IPs hold {@code high:low}, longest prefix first. */
    public Peer route6(long high, long low) {
        return peers.route6(high, low);
    }

    // ---------------------------------------------------------------- sending

    /** An inner packet from the TUN: sealed and sent through {@link Wire}, or staged behind a handshake. */
    public void sendPacket(byte[] packet, int off, int len) {
        Peer p = peerForPacket(packet, off, len);
        if (p == null) {
            return;
        }
        transport.send(p, packet, off, len);
    }

    /** The peer a TUN packet goes to (IPv4 or IPv6 destination), or null (counted). */
    public Peer peerForPacket(byte[] packet, int off, int len) {
        return peers.peerForPacket(packet, off, len);
    }

    /** Bytes a sealed packet of {@code len} inner bytes takes on the wire (header, padding, tag). */
    public int sealedSize(int len) {
        return transport.sealedSize(len);
    }

    /**
     * Seals {@code packet} for {@code p} into {@code out[outOff, …)} ({@link #sealedSize} bytes) and
     * returns the datagram's length; 0 when there is no usable session (the packet is staged and a
     * handshake started) or no endpoint. The caller sends it to {@code p.endpoint()}: so a data
     * plane can batch many into one sendmmsg.
     */
    public int seal(Peer p, byte[] packet, int off, int len, byte[] out, int outOff) {
        return transport.seal(p, packet, off, len, out, outOff);
    }

    /**
     * The first half of {@link #seal}, on one thread in packet order: the session's next counter
     * for this packet into {@code r}, and the timers a sent packet moves. False when there is no
     * usable session (the packet is staged and a handshake started) or no endpoint. Then
     * {@link #sealReserved}, on any thread: so several threads may seal one peer's packets while
     * their counters stay in the order the packets came (the receiver's replay window holds).
     */
    public boolean reserve(Peer p, byte[] packet, int off, int len, Reservation r) {
        return transport.reserve(p, packet, off, len, r, now());
    }

    /** {@link #reserve(Peer, byte[], int, int, Reservation)} at {@code now}, a reading of {@link #now} (a data plane reads it once per batch). */
    public boolean reserve(Peer p, byte[] packet, int off, int len, Reservation r, long now) {
        return transport.reserve(p, packet, off, len, r, now);
    }

    /** The second half of {@link #seal}: the sealed datagram into {@code out[outOff, …)}; returns its length. Any thread. */
    public int sealReserved(Reservation r, byte[] packet, int off, int len, byte[] out, int outOff) {
        return transport.sealReserved(r, packet, off, len, out, outOff);
    }

    /**
     * {@link #sealReserved} in place, without a copy: the packet is at {@code buf[at + DATA_HEADER,
     * … + len)} (reserved with that offset) and the array has room after it for the padding and the
     * tag ({@link #sealedSize}); the datagram is written over it from {@code buf[at]}. Returns its
     * length. Any thread.
     */
    public int sealReservedInPlace(Reservation r, byte[] buf, int at, int len) {
        return transport.sealReservedInPlace(r, buf, at, len);
    }

    // ---------------------------------------------------------------- receiving

    /** A datagram from the socket, from {@code from}: a data message's bytes counted for its peer at once. */
    public void receive(byte[] msg, int off, int len, Endpoint from) {
        Tally received = Tally.received();
        receiver.receive(msg, off, len, from, received);
        received.flush();
    }

    /** {@link #receive(byte[], int, int, Endpoint)} for a data plane: the bytes kept in {@code received} until it flushes. */
    public void receive(byte[] msg, int off, int len, Endpoint from, Tally received) {
        receiver.receive(msg, off, len, from, received);
    }

    /** True when {@code msg[off, off + len)} is a transport data message (type 4, long enough): {@link #open} may take it. */
    public static boolean isData(byte[] msg, int off, int len) {
        return Receiver.isData(msg, off, len);
    }

    /**
     * The first half of receiving a data message ({@link #isData}), on any thread: the session by
     * its receiver index, then the AEAD open into {@code plain[plainOff, …)} ({@code len} − 32
     * bytes). False (counted) when the index is unknown, the keys too old, or the tag fails. Then
     * {@link #finishData}, on one thread in the order the datagrams came: the replay window, the
     * session's confirmation, roaming and timers, delivery. So several threads may open one batch.
     */
    public boolean open(byte[] msg, int off, int len, byte[] plain, int plainOff, Opened o) {
        return receiver.open(msg, off, len, plain, plainOff, o, now());
    }

    /** {@link #open(byte[], int, int, byte[], int, Opened)} at {@code now}, a reading of {@link #now} (a data plane reads it once per batch). */
    public boolean open(byte[] msg, int off, int len, byte[] plain, int plainOff, Opened o, long now) {
        return receiver.open(msg, off, len, plain, plainOff, o, now);
    }

    /** The second half of receiving an {@link #open}ed data message, whose plaintext is at {@code plain[plainOff, …)}. */
    public void finishData(Opened o, byte[] plain, int plainOff, Endpoint from) {
        Tally received = Tally.received();
        receiver.finishData(o, plain, plainOff, from, received, now());
        received.flush();
    }

    /**
     * {@link #finishData(Opened, byte[], int, Endpoint)} for a data plane: at {@code now}, a reading of {@link #now}
     * (once per batch), and the bytes kept in {@code received} until it flushes.
     */
    public void finishData(Opened o, byte[] plain, int plainOff, Endpoint from, Tally received, long now) {
        receiver.finishData(o, plain, plainOff, from, received, now);
    }

    /**
     * Tests: crossed initiations handled as a plain WireGuard (the kernel's, wireguard-go) handles them:
     * every initiation answered, our own dropped when we do; so protocol tests can pair ours with one.
     */
    void behaveAsPlainWireguard() {
        handshakes.behaveAsPlainWireguard();
    }

    // ---------------------------------------------------------------- timers

    /**
     * The device's clock (its config's nanos): a data plane reads it once per batch and passes the reading to
     * {@link #reserve(Peer, byte[], int, int, Reservation, long)}, {@link #open(byte[], int, int, byte[], int, Opened, long)}
     * and {@link #finishData(Opened, byte[], int, Endpoint, Tally, long)}: what it decides by (keys' age, timers) is
     * counted in seconds, and a clock read per packet was ≈ 2 % of the machine's work under load (docs/benchmarks.md).
     */
    public long now() {
        return nanos.getAsLong();
    }

    /** Runs every peer's due timers: handshake retries, keepalives, rekeys, key expiry. */
    public void tick() {
        timers.tick(peers.live(), handshakes, transport, sessions);
    }
}
