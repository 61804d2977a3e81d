package org.jflannel.backend.wireguard.protocol;

import static org.jflannel.backend.wireguard.protocol.Messages.*;

import java.util.function.LongSupplier;
import org.jflannel.backend.wireguard.crypto.ChaChaPoly;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Receive: a datagram from the socket dispatched by its type (handshake messages to {@link Handshakes},
 * malformed ones counted), and transport data (whitepaper §5.4.6) in two halves so a data plane can open
 * a batch on several threads: {@link #open} on any thread (the session by receiver index, the AEAD), then
 * {@link #finishData} on one thread in arrival order (replay window, the responder's session confirmed,
 * roaming, timers, delivery of IPv4 and IPv6 from the peer's allowed IPs).
 */
final class Receiver {
    /** The device's log lines stay under its name. */
    private static final Logger LOG = LoggerFactory.getLogger(Device.class);

    private final Timings timings;
    private final LongSupplier nanos;
    private final Device.Wire wire;
    private final Counters counters;
    private final ThreadLocal<ChaChaPoly> aead;
    private final PerThread perThread;
    private final Handshakes handshakes;
    private final Transport transport;
    private final Sessions sessions;
    private final Peers peers;
    private final Timers timers;

    Receiver(Device.Config config, Device.Wire wire, Counters counters, PerThread perThread, Handshakes handshakes,
            Transport transport, Sessions sessions, Peers peers, Timers timers) {
        this.timings = config.timings();
        this.nanos = config.nanos();
        this.wire = wire;
        this.counters = counters;
        this.aead = perThread.aead;
        this.perThread = perThread;
        this.handshakes = handshakes;
        this.transport = transport;
        this.sessions = sessions;
        this.peers = peers;
        this.timers = timers;
    }

    /** A datagram from the socket, from {@code from}; a data message's bytes counted into {@code received}. */
    void receive(byte[] msg, int off, int len, Endpoint from, Tally received) {
        switch (type(msg, off, len)) {
            case INITIATION -> {
                if (len == INITIATION_SIZE && handshakes.gate(msg, off, len, from)) {
                    handshakes.onInitiation(msg, off, from);
                } else if (len != INITIATION_SIZE) {
                    counters.droppedMalformed.increment();
                }
            }
            case RESPONSE -> {
                if (len == RESPONSE_SIZE && handshakes.gate(msg, off, len, from)) {
                    Peer p = handshakes.onResponse(msg, off, from);
                    if (p != null) {
                        transport.initiatorSessionUp(p);
                    }
                } else if (len != RESPONSE_SIZE) {
                    counters.droppedMalformed.increment();
                }
            }
            case COOKIE_REPLY -> {
                if (len == COOKIE_REPLY_SIZE) {
                    handshakes.onCookieReply(msg, off);
                } else {
                    counters.droppedMalformed.increment();
                }
            }
            case DATA -> {
                if (len >= DATA_MIN) {
                    onData(msg, off, len, from, received);
                } else {
                    counters.droppedMalformed.increment();
                }
            }
            default -> counters.droppedMalformed.increment();
        }
    }

    private void onData(byte[] msg, int off, int len, Endpoint from, Tally received) {
        Device.Opened o = new Device.Opened();
        byte[] plain = scratch(len - DATA_MIN);
        long now = nanos.getAsLong();
        if (open(msg, off, len, plain, 0, o, now)) {
            finishData(o, plain, 0, from, received, now);
        }
    }

    private byte[] scratch(int n) {
        return perThread.scratch(n);
    }

    /** True when {@code msg[off, off + len)} is a transport data message (type 4, long enough): {@link #open} may take it. */
    static boolean isData(byte[] msg, int off, int len) {
        return len >= DATA_MIN && type(msg, off, len) == DATA;
    }

    /** See {@link Device#open}; {@code now} is the device clock's reading (one per batch will do). */
    boolean open(byte[] msg, int off, int len, byte[] plain, int plainOff, Device.Opened o, long now) {
        Sessions.Index idx = sessions.get(u32(msg, off + DATA_RECEIVER));
        if (idx == null || idx.keypair() == null) {
            counters.droppedUnknownIndex.increment();
            return false;
        }
        Keypair kp = idx.keypair();
        if (now - kp.createdNanos >= timings.rejectAfterTime().toNanos()) {
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

    /**
     * The second half of receiving an {@link #open}ed data message, whose plaintext is at {@code plain[plainOff, …)}:
     * once the replay window takes it, its bytes (the whole message, as the kernel counts it) go into {@code received}.
     */
    void finishData(Device.Opened o, byte[] plain, int plainOff, Endpoint from, Tally received, long now) {
        Keypair kp = o.index.keypair();
        Peer p = o.index.peer();
        long counter = o.counter;
        int n = o.length;
        if (!kp.acceptCounter(counter, timings.rejectAfterMessages())) {
            counters.droppedReplay.increment();
            return;
        }
        received.add(p, DATA_MIN + n);
        boolean confirmed = false;
        synchronized (p) {
            if (kp == p.next) {
                sessions.makeCurrent(p, kp);
                p.next = null;
                timers.handshakeComplete(p, now);
                confirmed = true;
                LOG.info("wireguard session up peer={} endpoint={} role=responder", p, from);
            }
            p.endpoint = from; // roaming: the peer is where its authenticated packets come from
            timers.anyAuthenticatedPacketTraversal(p, now);
            p.newHandshakeAt = Peer.OFF;
            Keypair cur = p.current;
            // keep the key fresh from the receiving side: the initiator rekeys before the responder must reject
            if (cur != null && cur.initiator && !p.sentLastMinuteHandshake && now - cur.createdNanos
                    >= timings.rejectAfterTime().toNanos() - timings.keepaliveTimeout().toNanos() - timings.rekeyTimeout().toNanos()) {
                p.sentLastMinuteHandshake = true;
                handshakes.sendInitiation(p, now, false);
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
                transport.sendStaged(p); // after delivering: sealing reuses this thread's plaintext buffer
            }
        }
    }

    /** An authenticated plaintext of {@code n} bytes from {@code p}: to the TUN when it is IPv4 or IPv6 from p's allowed IPs. */
    private void deliverInner(Peer p, byte[] plain, int at, int n) {
        int inner = innerLength(plain, at, n);
        if (inner < 0) {
            counters.droppedMalformed.increment();
            return;
        }
        boolean v6 = (plain[at] & 0xf0) == 0x60;
        if (peers.routeAddress(plain, at + (v6 ? 8 : 12), v6) != p) {
            counters.droppedBadSource.increment();
            return;
        }
        counters.rxPackets.increment();
        counters.rxBytes.add(inner);
        wire.deliver(plain, at, inner);
    }

    /**
     * The IP packet's own length within the padded plaintext (IPv4: total length; IPv6: 40 + payload
     * length); -1 when neither or inconsistent.
     */
    static int innerLength(byte[] plain, int at, int n) {
        int version = n > 0 ? plain[at] & 0xf0 : 0;
        if (version == 0x40 && n >= 20) {
            int total = (plain[at + 2] & 0xff) << 8 | (plain[at + 3] & 0xff);
            return total < 20 || total > n ? -1 : total;
        }
        if (version == 0x60 && n >= 40) {
            int total = 40 + ((plain[at + 4] & 0xff) << 8 | (plain[at + 5] & 0xff)); // a jumbogram (0) never fits an MTU
            return total > n ? -1 : total;
        }
        return -1;
    }
}
