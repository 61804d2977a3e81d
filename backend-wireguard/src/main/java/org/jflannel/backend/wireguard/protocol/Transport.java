package org.jflannel.backend.wireguard.protocol;

import static org.jflannel.backend.wireguard.protocol.Messages.*;

import java.util.Arrays;
import java.util.function.LongSupplier;
import org.jflannel.backend.wireguard.crypto.ChaChaPoly;

/**
 * Transport send (whitepaper §5.4.6): an inner packet to a peer's current session, as a data message.
 * In two halves so a data plane can seal on several threads: {@link #reserve} on one thread in packet
 * order (the session's next counter, the timers a sent packet moves, a handshake started when the
 * keys are missing or old), then {@link #sealReserved} on any thread (the AEAD). Packets without a
 * session are staged behind the handshake and sent when it completes; keepalives are empty packets.
 */
final class Transport {
    private final Timings timings;
    private final LongSupplier nanos;
    private final Device.Wire wire;
    private final Counters counters;
    private final int mtu;
    private final ThreadLocal<ChaChaPoly> aead;
    private final PerThread perThread;
    private final Handshakes handshakes;
    private final Timers timers;

    Transport(Device.Config config, Device.Wire wire, Counters counters, PerThread perThread, Handshakes handshakes,
            Timers timers) {
        this.timings = config.timings();
        this.nanos = config.nanos();
        this.wire = wire;
        this.counters = counters;
        this.mtu = config.mtu();
        this.aead = perThread.aead;
        this.perThread = perThread;
        this.handshakes = handshakes;
        this.timers = timers;
    }

    /** An inner packet for {@code p}: sealed and sent through the wire, or staged behind a handshake. */
    void send(Peer p, byte[] packet, int off, int len) {
        byte[] out = new byte[DATA_HEADER + padded(len) + ChaChaPoly.TAG];
        int n = seal(p, packet, off, len, out, 0);
        if (n > 0) {
            wire.send(out, 0, n, p.endpoint);
            p.txBytes.addAndGet(n); // one datagram per call here: the batched path (TxQueue) counts per flush
        }
    }

    /** Bytes a sealed packet of {@code len} inner bytes takes on the wire (header, padding, tag). */
    int sealedSize(int len) {
        return DATA_HEADER + padded(len) + ChaChaPoly.TAG;
    }

    /** {@link #reserve} then {@link #sealReserved}, on this thread: the datagram's length, or 0. */
    int seal(Peer p, byte[] packet, int off, int len, byte[] out, int outOff) {
        Device.Reservation r = new Device.Reservation();
        return reserve(p, packet, off, len, r, nanos.getAsLong()) ? sealReserved(r, packet, off, len, out, outOff) : 0;
    }

    /** See {@link Device#reserve}; {@code now} is the device clock's reading (one per batch will do). */
    boolean reserve(Peer p, byte[] packet, int off, int len, Device.Reservation r, long now) {
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
                handshakes.sendInitiation(p, now, false);
                return false;
            }
            if (Long.compareUnsigned(counter, timings.rekeyAfterMessages()) >= 0
                    || (kp.initiator && now - kp.createdNanos >= timings.rekeyAfterTime().toNanos())) {
                handshakes.sendInitiation(p, now, false); // keep the key fresh; this packet still goes under the old one
            }
            timers.anyAuthenticatedPacketTraversal(p, now);
            p.sendKeepaliveAt = Peer.OFF; // any authenticated packet sent
            if (len > 0) {
                timers.dataSent(p, now);
            }
        }
        r.keypair = kp;
        r.counter = counter;
        return true;
    }

    /** The second half of {@link #seal}: the sealed datagram into {@code out[outOff, …)}; returns its length. Any thread. */
    int sealReserved(Device.Reservation r, byte[] packet, int off, int len, byte[] out, int outOff) {
        return sealWith(r.keypair, r.counter, packet, off, len, out, outOff);
    }

    /** {@link Device#sealReservedInPlace}. */
    int sealReservedInPlace(Device.Reservation r, byte[] buf, int at, int len) {
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
        return perThread.scratch(n);
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

    /** The packets staged for {@code p}, sealed under its session now up. */
    void sendStaged(Peer p) {
        byte[] pkt;
        while ((pkt = pollStaged(p)) != null) {
            byte[] out = new byte[sealedSize(pkt.length)];
            int n = seal(p, pkt, 0, pkt.length, out, 0);
            if (n == 0) {
                return;
            }
            wire.send(out, 0, n, p.endpoint);
            p.txBytes.addAndGet(n);
        }
    }

    private static byte[] pollStaged(Peer p) {
        synchronized (p) {
            return p.current == null ? null : p.staged.pollFirst();
        }
    }

    /** An empty data message, unless staged data is about to go out instead. */
    void sendKeepalive(Peer p) {
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
            p.txBytes.addAndGet(n);
        }
    }

    /** Our initiation was answered: the session is confirmed to the responder by the staged data, or a keepalive. */
    void initiatorSessionUp(Peer p) {
        if (!hasStaged(p)) {
            sendKeepalive(p); // confirms the session to the responder
        }
        sendStaged(p);
    }

    private static boolean hasStaged(Peer p) {
        synchronized (p) {
            return !p.staged.isEmpty();
        }
    }
}
