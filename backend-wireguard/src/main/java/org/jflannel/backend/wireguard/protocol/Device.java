package org.jflannel.backend.wireguard.protocol;

import static org.jflannel.backend.wireguard.protocol.Messages.*;

import java.security.SecureRandom;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Base64;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.jflannel.backend.wireguard.crypto.ChaChaPoly;
import org.jflannel.backend.wireguard.crypto.X25519;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A userspace WireGuard interface without its I/O: peers by public key, the receiver-index table,
 * cryptokey routing (allowed IPs), and the message handling and timers of whitepaper §5–6. The
 * data plane feeds it packets from the TUN ({@link #seal}/{@link #sendPacket}) and datagrams from
 * the socket ({@link #receive}), calls {@link #tick} a few times a second, and gets back what to put
 * on the wire and into the TUN through {@link Wire}. Time and randomness are injected, so the
 * protocol runs in tests without a clock or a network.
 *
 * <p>Threads: any number may call in. Peer state is guarded by the peer; the index table is a
 * concurrent map; decryption runs outside any lock; each thread has its own cipher objects.
 */
public final class Device {
    private static final Logger LOG = LoggerFactory.getLogger(Device.class);
    /** wireguard-go's HandshakeInitationRate: at most one initiation per peer consumed per 20 ms. */
    private static final long INITIATION_MIN_INTERVAL_NANOS = 20_000_000L;
    private static final long JITTER_NANOS = 333_000_000L;

    /** Where the device's output goes. */
    public interface Wire {
        /** A WireGuard message to put on the wire (the array may be reused after the call). */
        void send(byte[] datagram, int off, int len, Endpoint to);

        /** A decrypted, authenticated inner IP packet for the TUN. */
        void deliver(byte[] packet, int off, int len);
    }

    private record Index(Peer peer, Keypair keypair) {
    }

    private final byte[] privateKey;
    private final byte[] publicKey;
    private final Timings timings;
    private final LongSupplier nanos;
    private final Supplier<Instant> wallClock;
    private final SecureRandom random;
    private final Wire wire;
    private final BooleanSupplier underLoad;
    private final Runnable handshakeArrived;
    private final int mtu;
    private final Cookies.Checker cookieChecker;
    private final Map<String, Peer> peers = new ConcurrentHashMap<>();
    private final Map<Integer, Index> indices = new ConcurrentHashMap<>();
    private final Counters counters = new Counters();
    private final ThreadLocal<Noise> noise = ThreadLocal.withInitial(Noise::new);
    private final ThreadLocal<ChaChaPoly> aead = ThreadLocal.withInitial(ChaChaPoly::new);
    /** Per-thread plaintext buffer: no allocation per packet (a thread seals or opens one packet at a time). */
    private final ThreadLocal<byte[][]> scratch = ThreadLocal.withInitial(() -> new byte[][] {new byte[2048]});
    private volatile Route[] routes = new Route[0];
    private byte[] lastTimestamp = new byte[12];

    private record Route(AllowedIp prefix, Peer peer) {
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

    public Device(Config config, Wire wire) {
        this.privateKey = config.privateKey().clone();
        this.publicKey = X25519.publicKey(privateKey);
        this.timings = config.timings();
        this.nanos = config.nanos();
        this.wallClock = config.wallClock();
        this.random = config.random();
        this.wire = wire;
        this.underLoad = config.underLoad();
        this.handshakeArrived = config.handshakeArrived();
        this.mtu = config.mtu();
        this.cookieChecker = new Cookies.Checker(publicKey, timings.cookieRefreshTime().toNanos(), random);
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
        String key = Base64.getEncoder().encodeToString(peerPublic);
        Peer p = peers.computeIfAbsent(key, k -> new Peer(peerPublic,
                X25519.dh(privateKey, peerPublic).orElseThrow(() -> new IllegalArgumentException("peer public key has small order: " + k)),
                timings.cookieRefreshTime().toNanos() - timings.rekeyTimeout().toNanos()));
        synchronized (p) {
            p.psk = psk == null ? null : psk.clone();
            if (endpoint != null) {
                p.endpoint = endpoint;
            }
            p.allowedIps = List.copyOf(allowedIps);
            boolean keepaliveTurnedOn = p.persistentKeepaliveSeconds == 0 && keepaliveSeconds > 0;
            p.persistentKeepaliveSeconds = keepaliveSeconds;
            if (keepaliveTurnedOn) {
                // as wireguard-go: a keepalive right away, which also brings the session up
                sendKeepalive(p, nanos.getAsLong());
            }
        }
        rebuildRoutes();
        return p;
    }

    public Optional<Peer> peer(byte[] peerPublic) {
        return Optional.ofNullable(peers.get(Base64.getEncoder().encodeToString(peerPublic)));
    }

    public List<Peer> peers() {
        return List.copyOf(peers.values());
    }

    public void removePeer(byte[] peerPublic) {
        Peer p = peers.remove(Base64.getEncoder().encodeToString(peerPublic));
        if (p != null) {
            synchronized (p) {
                zeroKeys(p);
                p.staged.clear();
            }
            rebuildRoutes();
        }
    }

    private void rebuildRoutes() {
        List<Route> r = new ArrayList<>();
        for (Peer p : peers.values()) {
            for (AllowedIp a : p.allowedIps) {
                r.add(new Route(a, p));
            }
        }
        r.sort(Comparator.comparingInt((Route x) -> x.prefix.prefixLength()).reversed());
        routes = r.toArray(new Route[0]);
    }

    /** The peer whose allowed IPs hold {@code ip}, longest prefix first. */
    public Peer route(int ip) {
        for (Route r : routes) {
            if (r.prefix.contains(ip)) {
                return r.peer;
            }
        }
        return null;
    }

    // ---------------------------------------------------------------- sending

    /** An inner packet from the TUN: sealed and sent through {@link Wire}, or staged behind a handshake. */
    public void sendPacket(byte[] packet, int off, int len) {
        Peer p = peerForPacket(packet, off, len);
        if (p == null) {
            return;
        }
        byte[] out = new byte[DATA_HEADER + padded(len) + ChaChaPoly.TAG];
        int n = seal(p, packet, off, len, out, 0);
        if (n > 0) {
            wire.send(out, 0, n, p.endpoint);
        }
    }

    /** The peer a TUN packet goes to (IPv4 destination), or null (counted). */
    public Peer peerForPacket(byte[] packet, int off, int len) {
        if (len < 20 || (packet[off] & 0xf0) != 0x40) {
            counters.droppedNoPeer.increment();
            return null;
        }
        int dst = (packet[off + 16] & 0xff) << 24 | (packet[off + 17] & 0xff) << 16 | (packet[off + 18] & 0xff) << 8 | (packet[off + 19] & 0xff);
        Peer p = route(dst);
        if (p == null) {
            counters.droppedNoPeer.increment();
        }
        return p;
    }

    /** Bytes a sealed packet of {@code len} inner bytes takes on the wire (header, padding, tag). */
    public int sealedSize(int len) {
        return DATA_HEADER + padded(len) + ChaChaPoly.TAG;
    }

    /**
     * Seals {@code packet} for {@code p} into {@code out[outOff, …)} ({@link #sealedSize} bytes) and
     * returns the datagram's length; 0 when there is no usable session (the packet is staged and a
     * handshake started) or no endpoint. The caller sends it to {@code p.endpoint()}: so a data
     * plane can batch many into one sendmmsg.
     */
    public int seal(Peer p, byte[] packet, int off, int len, byte[] out, int outOff) {
        Reservation r = new Reservation();
        return reserve(p, packet, off, len, r) ? sealReserved(r, packet, off, len, out, outOff) : 0;
    }

    /** A packet's place in its session: the keypair and the counter reserved for it. Mutable, reused by a data plane. */
    public static final class Reservation {
        Keypair keypair;
        long counter;
    }

    /**
     * The first half of {@link #seal}, on one thread in packet order: the session's next counter
     * for this packet into {@code r}, and the timers a sent packet moves. False when there is no
     * usable session (the packet is staged and a handshake started) or no endpoint. Then
     * {@link #sealReserved}, on any thread: so several threads may seal one peer's packets while
     * their counters stay in the order the packets came (the receiver's replay window holds).
     */
    public boolean reserve(Peer p, byte[] packet, int off, int len, Reservation r) {
        long now = nanos.getAsLong();
        Keypair kp;
        long counter;
        synchronized (p) {
            if (p.endpoint == null) {
                counters.droppedNoPeer.increment();
                return false;
            }
            kp = p.current;
            counter = kp == null ? -1 : kp.sendCounter.getAndIncrement();
            if (kp == null || now - kp.createdNanos >= timings.rejectAfterTime().toNanos()
                    || Long.compareUnsigned(counter, timings.rejectAfterMessages()) >= 0) {
                stage(p, packet, off, len);
                sendInitiation(p, now, false);
                return false;
            }
            if (Long.compareUnsigned(counter, timings.rekeyAfterMessages()) >= 0
                    || (kp.initiator && now - kp.createdNanos >= timings.rekeyAfterTime().toNanos())) {
                sendInitiation(p, now, false); // keep the key fresh; this packet still goes under the old one
            }
            anyAuthenticatedPacketTraversal(p, now);
            p.sendKeepaliveAt = Peer.OFF; // any authenticated packet sent
            if (len > 0) {
                dataSent(p, now);
            }
        }
        r.keypair = kp;
        r.counter = counter;
        return true;
    }

    /** The second half of {@link #seal}: the sealed datagram into {@code out[outOff, …)}; returns its length. Any thread. */
    public int sealReserved(Reservation r, byte[] packet, int off, int len, byte[] out, int outOff) {
        return sealWith(r.keypair, r.counter, packet, off, len, out, outOff);
    }

    /**
     * {@link #sealReserved} in place, without a copy: the packet is at {@code buf[at + DATA_HEADER,
     * … + len)} (reserved with that offset) and the array has room after it for the padding and the
     * tag ({@link #sealedSize}); the datagram is written over it from {@code buf[at]}. Returns its
     * length. Any thread.
     */
    public int sealReservedInPlace(Reservation r, byte[] buf, int at, int len) {
        Keypair kp = r.keypair;
        int padded = padded(len);
        Arrays.fill(buf, at + DATA_HEADER + len, at + DATA_HEADER + padded, (byte) 0); // the zero padding is sealed too
        u32(buf, at, DATA);
        u32(buf, at + DATA_RECEIVER, kp.remoteIndex);
        u64(buf, at + DATA_COUNTER, r.counter);
        int n = aead.get().seal(kp.sendKey, r.counter, buf, at + DATA_HEADER, padded, buf, at + DATA_HEADER);
        counters.txPackets.increment();
        counters.txBytes.add(len);
        return DATA_HEADER + n;
    }

    private int sealWith(Keypair kp, long counter, byte[] packet, int off, int len, byte[] out, int outOff) {
        int padded = padded(len);
        u32(out, outOff, DATA);
        u32(out, outOff + DATA_RECEIVER, kp.remoteIndex);
        u64(out, outOff + DATA_COUNTER, counter);
        byte[] plain = scratch(padded);
        System.arraycopy(packet, off, plain, 0, len);
        Arrays.fill(plain, len, padded, (byte) 0); // the zero padding is sealed too
        int n = aead.get().seal(kp.sendKey, counter, plain, 0, padded, out, outOff + DATA_HEADER);
        counters.txPackets.increment();
        counters.txBytes.add(len);
        return DATA_HEADER + n;
    }

    private byte[] scratch(int n) {
        byte[][] holder = scratch.get();
        if (holder[0].length < n) {
            holder[0] = new byte[Math.max(n, 2 * holder[0].length)];
        }
        return holder[0];
    }

    /** wireguard-go's padding: up to a multiple of 16, never beyond the MTU. */
    private int padded(int len) {
        if (mtu <= 0) {
            return (len + 15) & ~15;
        }
        int last = len > mtu ? len % mtu : len;
        int p = Math.min((last + 15) & ~15, mtu);
        return len + Math.max(0, p - last);
    }

    private void stage(Peer p, byte[] packet, int off, int len) {
        if (len == 0) {
            return; // a keepalive is not worth keeping: the handshake itself says we are alive
        }
        if (p.staged.size() >= Peer.MAX_STAGED) {
            p.staged.pollFirst();
        }
        p.staged.addLast(Arrays.copyOfRange(packet, off, off + len));
    }

    private void sendStaged(Peer p) {
        byte[] pkt;
        while ((pkt = pollStaged(p)) != null) {
            byte[] out = new byte[sealedSize(pkt.length)];
            int n = seal(p, pkt, 0, pkt.length, out, 0);
            if (n == 0) {
                return;
            }
            wire.send(out, 0, n, p.endpoint);
        }
    }

    private static byte[] pollStaged(Peer p) {
        synchronized (p) {
            return p.current == null ? null : p.staged.pollFirst();
        }
    }

    private void sendKeepalive(Peer p, long now) {
        synchronized (p) {
            if (!p.staged.isEmpty() && p.current != null) {
                return; // staged data goes out instead
            }
        }
        byte[] out = new byte[sealedSize(0)];
        int n = seal(p, new byte[0], 0, 0, out, 0);
        if (n > 0) {
            counters.keepalivesSent.increment();
            wire.send(out, 0, n, p.endpoint);
        }
    }

    /** Holding p: a handshake initiation, unless one went out less than REKEY_TIMEOUT ago (and this is no retry). */
    private void sendInitiation(Peer p, long now, boolean retry) {
        if (!retry && p.lastHandshakeSentNanos != Long.MIN_VALUE
                && now - p.lastHandshakeSentNanos < timings.rekeyTimeout().toNanos()) {
            return;
        }
        if (p.endpoint == null) {
            return;
        }
        if (!retry) {
            p.handshakeAttempts = 0;
        }
        p.lastHandshakeSentNanos = now;
        if (p.handshake.localIndex != 0) {
            indices.remove(p.handshake.localIndex, new Index(p, null));
        }
        int index = newIndex(p, null);
        byte[] msg = new byte[INITIATION_SIZE];
        noise.get().createInitiation(p.handshake, privateKey, publicKey, p.publicKey, p.precomputedStaticStatic,
                timestamp(), index, random, msg);
        p.cookies.addMacs(msg, 0, INITIATION_SIZE, now);
        counters.handshakesInitiated.increment();
        LOG.debug("wireguard handshake initiation peer={} endpoint={} retry={}", p, p.endpoint, retry);
        wire.send(msg, 0, INITIATION_SIZE, p.endpoint);
        anyAuthenticatedPacketTraversal(p, now);
        p.sendKeepaliveAt = Peer.OFF;
        p.retransmitHandshakeAt = now + timings.rekeyTimeout().toNanos() + jitter();
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

    private int newIndex(Peer p, Keypair kp) {
        while (true) {
            int i = random.nextInt();
            if (i != 0 && indices.putIfAbsent(i, new Index(p, kp)) == null) {
                return i;
            }
        }
    }

    private long jitter() {
        return (long) (random.nextDouble() * JITTER_NANOS);
    }

    // ---------------------------------------------------------------- receiving

    /** A datagram from the socket, from {@code from}. */
    public void receive(byte[] msg, int off, int len, Endpoint from) {
        switch (type(msg, off, len)) {
            case INITIATION -> {
                if (len == INITIATION_SIZE && handshakeGate(msg, off, len, from)) {
                    onInitiation(msg, off, from);
                } else if (len != INITIATION_SIZE) {
                    counters.droppedMalformed.increment();
                }
            }
            case RESPONSE -> {
                if (len == RESPONSE_SIZE && handshakeGate(msg, off, len, from)) {
                    onResponse(msg, off, from);
                } else if (len != RESPONSE_SIZE) {
                    counters.droppedMalformed.increment();
                }
            }
            case COOKIE_REPLY -> {
                if (len == COOKIE_REPLY_SIZE) {
                    onCookieReply(msg, off);
                } else {
                    counters.droppedMalformed.increment();
                }
            }
            case DATA -> {
                if (len >= DATA_MIN) {
                    onData(msg, off, len, from);
                } else {
                    counters.droppedMalformed.increment();
                }
            }
            default -> counters.droppedMalformed.increment();
        }
    }

    /** mac1 always; under load a valid mac2 too, else a cookie reply goes back and the message is dropped. */
    private boolean handshakeGate(byte[] msg, int off, int len, Endpoint from) {
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
        }
        return true;
    }

    private void onInitiation(byte[] msg, int off, Endpoint from) {
        Noise n = noise.get();
        Optional<Noise.Initiation> init = n.consumeInitiation(msg, off, privateKey, publicKey);
        Peer p = init.map(i -> peers.get(Base64.getEncoder().encodeToString(i.initiatorStatic()))).orElse(null);
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
            if (!n.acceptInitiation(p.handshake, init.get(), p.precomputedStaticStatic, now, INITIATION_MIN_INTERVAL_NANOS)) {
                counters.droppedBadHandshake.increment();
                return;
            }
            if (pending != 0) {
                indices.remove(pending, new Index(p, null)); // our own initiation, crossed by theirs, is void now
            }
            p.endpoint = from;
            anyAuthenticatedPacketTraversal(p, now);
            p.newHandshakeAt = Peer.OFF; // any authenticated packet received
            int index = newIndex(p, null);
            byte[] resp = new byte[RESPONSE_SIZE];
            if (!n.createResponse(p.handshake, p.publicKey, p.psk, index, random, resp)) {
                indices.remove(index);
                counters.droppedBadHandshake.increment();
                return;
            }
            p.cookies.addMacs(resp, 0, RESPONSE_SIZE, now);
            Keypair kp = new Keypair(Noise.deriveKeys(p.handshake), now);
            indices.put(index, new Index(p, kp));
            // responder: the new keypair waits in "next" until the initiator's first data confirms it
            if (p.next != null) {
                forget(p.next);
            }
            p.next = kp;
            if (p.previous != null) {
                forget(p.previous);
                p.previous = null;
            }
            p.zeroKeysAt = now + 3 * timings.rejectAfterTime().toNanos();
            LOG.debug("wireguard handshake response peer={} endpoint={}", p, from);
            wire.send(resp, 0, RESPONSE_SIZE, from);
            p.sendKeepaliveAt = Peer.OFF;
        }
    }

    /** Holding p: our own initiation to p is in flight (younger than REKEY_TIMEOUT) and our key is the lower. */
    private boolean crossedAndOurInitiationWins(Peer p, long now) {
        return p.handshake.state() == Noise.State.INITIATION_CREATED
                && now - p.lastHandshakeSentNanos < timings.rekeyTimeout().toNanos()
                && Arrays.compareUnsigned(publicKey, p.publicKey) < 0;
    }

    private void onResponse(byte[] msg, int off, Endpoint from) {
        Index idx = indices.get(u32(msg, off + RESP_RECEIVER));
        if (idx == null || idx.keypair != null) {
            counters.droppedUnknownIndex.increment();
            return;
        }
        Peer p = idx.peer;
        long now = nanos.getAsLong();
        synchronized (p) {
            if (p.handshake.localIndex != u32(msg, off + RESP_RECEIVER)
                    || !noise.get().consumeResponse(p.handshake, msg, off, privateKey, p.psk)) {
                counters.droppedBadHandshake.increment();
                return;
            }
            Keypair kp = new Keypair(Noise.deriveKeys(p.handshake), now);
            indices.put(kp.localIndex, new Index(p, kp));
            // initiator: the new keypair is current at once; the old current becomes previous
            if (p.next != null) {
                if (p.previous != null) {
                    forget(p.previous);
                }
                p.previous = p.next;
                p.next = null;
                if (p.current != null) {
                    forget(p.current);
                }
            } else {
                if (p.previous != null) {
                    forget(p.previous);
                }
                p.previous = p.current;
            }
            p.current = kp;
            p.endpoint = from;
            handshakeComplete(p, now);
            p.zeroKeysAt = now + 3 * timings.rejectAfterTime().toNanos();
            anyAuthenticatedPacketTraversal(p, now);
            p.newHandshakeAt = Peer.OFF;
            LOG.info("wireguard session up peer={} endpoint={} role=initiator", p, from);
        }
        if (!hasStaged(p)) {
            sendKeepalive(p, now); // confirms the session to the responder
        }
        sendStaged(p);
    }

    private static boolean hasStaged(Peer p) {
        synchronized (p) {
            return !p.staged.isEmpty();
        }
    }

    private void onCookieReply(byte[] msg, int off) {
        Index idx = indices.get(u32(msg, off + COOKIE_RECEIVER));
        if (idx == null) {
            counters.droppedUnknownIndex.increment();
            return;
        }
        if (idx.peer.cookies.consumeReply(msg, off, nanos.getAsLong())) {
            counters.cookieRepliesReceived.increment();
        } else {
            counters.droppedBadMac.increment();
        }
    }

    private void onData(byte[] msg, int off, int len, Endpoint from) {
        Opened o = new Opened();
        byte[] plain = scratch(len - DATA_MIN);
        if (open(msg, off, len, plain, 0, o)) {
            finishData(o, plain, 0, from);
        }
    }

    /** A data message opened by {@link #open}: its session and counter, and the plaintext's length. Mutable, reused by a data plane. */
    public static final class Opened {
        Index index;
        long counter;
        int length;
    }

    /** True when {@code msg[off, off + len)} is a transport data message (type 4, long enough): {@link #open} may take it. */
    public static boolean isData(byte[] msg, int off, int len) {
        return len >= DATA_MIN && type(msg, off, len) == DATA;
    }

    /**
     * The first half of receiving a data message ({@link #isData}), on any thread: the session by
     * its receiver index, then the AEAD open into {@code plain[plainOff, …)} ({@code len} − 32
     * bytes). False (counted) when the index is unknown, the keys too old, or the tag fails. Then
     * {@link #finishData}, on one thread in the order the datagrams came: the replay window, the
     * session's confirmation, roaming and timers, delivery. So several threads may open one batch.
     */
    public boolean open(byte[] msg, int off, int len, byte[] plain, int plainOff, Opened o) {
        Index idx = indices.get(u32(msg, off + DATA_RECEIVER));
        if (idx == null || idx.keypair == null) {
            counters.droppedUnknownIndex.increment();
            return false;
        }
        Keypair kp = idx.keypair;
        if (nanos.getAsLong() - kp.createdNanos >= timings.rejectAfterTime().toNanos()) {
            counters.droppedStaleKeys.increment();
            return false;
        }
        long counter = u64(msg, off + DATA_COUNTER);
        int n = aead.get().open(kp.receiveKey, counter, msg, off + DATA_HEADER, len - DATA_HEADER, plain, plainOff);
        if (n < 0) {
            counters.droppedBadAuth.increment();
            return false;
        }
        o.index = idx;
        o.counter = counter;
        o.length = n;
        return true;
    }

    /** The second half of receiving an {@link #open}ed data message, whose plaintext is at {@code plain[plainOff, …)}. */
    public void finishData(Opened o, byte[] plain, int plainOff, Endpoint from) {
        Keypair kp = o.index.keypair;
        Peer p = o.index.peer;
        long counter = o.counter;
        int n = o.length;
        long now = nanos.getAsLong();
        if (!kp.acceptCounter(counter, timings.rejectAfterMessages())) {
            counters.droppedReplay.increment();
            return;
        }
        boolean confirmed = false;
        synchronized (p) {
            if (kp == p.next) {
                if (p.previous != null) {
                    forget(p.previous);
                }
                p.previous = p.current;
                p.current = kp;
                p.next = null;
                handshakeComplete(p, now);
                confirmed = true;
                LOG.info("wireguard session up peer={} endpoint={} role=responder", p, from);
            }
            p.endpoint = from; // roaming: the peer is where its authenticated packets come from
            anyAuthenticatedPacketTraversal(p, now);
            p.newHandshakeAt = Peer.OFF;
            Keypair cur = p.current;
            // keep the key fresh from the receiving side: the initiator rekeys before the responder must reject
            if (cur != null && cur.initiator && !p.sentLastMinuteHandshake && now - cur.createdNanos
                    >= timings.rejectAfterTime().toNanos() - timings.keepaliveTimeout().toNanos() - timings.rekeyTimeout().toNanos()) {
                p.sentLastMinuteHandshake = true;
                sendInitiation(p, now, false);
            }
            if (n > 0) {
                if (p.sendKeepaliveAt == Peer.OFF) {
                    p.sendKeepaliveAt = now + timings.keepaliveTimeout().toNanos();
                } else {
                    p.needAnotherKeepalive = true;
                }
            }
        }
        try {
            if (n > 0) {
                deliverInner(p, plain, plainOff, n);
            }
        } finally {
            if (confirmed) {
                sendStaged(p); // after delivering: sealing reuses this thread's plaintext buffer
            }
        }
    }

    /** An authenticated plaintext of {@code n} bytes from {@code p}: to the TUN when it is IPv4 from p's allowed IPs. */
    private void deliverInner(Peer p, byte[] plain, int at, int n) {
        int inner = innerLength(plain, at, n);
        if (inner < 0) {
            counters.droppedMalformed.increment();
            return;
        }
        int src = (plain[at + 12] & 0xff) << 24 | (plain[at + 13] & 0xff) << 16 | (plain[at + 14] & 0xff) << 8 | (plain[at + 15] & 0xff);
        if (route(src) != p) {
            counters.droppedBadSource.increment();
            return;
        }
        counters.rxPackets.increment();
        counters.rxBytes.add(inner);
        wire.deliver(plain, at, inner);
    }

    /** The IPv4 packet's own length within the padded plaintext; -1 when not IPv4 or inconsistent. */
    private static int innerLength(byte[] plain, int at, int n) {
        if (n < 20 || (plain[at] & 0xf0) != 0x40) {
            return -1;
        }
        int total = (plain[at + 2] & 0xff) << 8 | (plain[at + 3] & 0xff);
        return total < 20 || total > n ? -1 : total;
    }

    // ---------------------------------------------------------------- timers

    /** Runs every peer's due timers: handshake retries, keepalives, rekeys, key expiry. */
    public void tick() {
        long now = nanos.getAsLong();
        for (Peer p : peers.values()) {
            boolean keepalive = false;
            synchronized (p) {
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
                        sendInitiation(p, now, true);
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
                    sendInitiation(p, now, false);
                }
                if (now >= p.zeroKeysAt) {
                    p.zeroKeysAt = Peer.OFF;
                    zeroKeys(p);
                }
                if (now >= p.persistentKeepaliveAt) {
                    p.persistentKeepaliveAt = Peer.OFF;
                    keepalive = true;
                }
            }
            if (keepalive) {
                sendKeepalive(p, now);
            }
        }
    }

    private void anyAuthenticatedPacketTraversal(Peer p, long now) {
        int k = p.persistentKeepaliveSeconds;
        if (k > 0) {
            p.persistentKeepaliveAt = now + k * 1_000_000_000L;
        }
    }

    private void dataSent(Peer p, long now) {
        if (p.newHandshakeAt == Peer.OFF) {
            p.newHandshakeAt = now + timings.keepaliveTimeout().toNanos() + timings.rekeyTimeout().toNanos() + jitter();
        }
    }

    private void handshakeComplete(Peer p, long now) {
        p.retransmitHandshakeAt = Peer.OFF;
        p.handshakeAttempts = 0;
        p.sentLastMinuteHandshake = false;
        p.lastHandshakeCompletedNanos = now;
        counters.handshakesCompleted.increment();
    }

    private void zeroKeys(Peer p) {
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
    }

    private void forget(Keypair k) {
        indices.remove(k.localIndex);
        k.wipe();
    }
}
