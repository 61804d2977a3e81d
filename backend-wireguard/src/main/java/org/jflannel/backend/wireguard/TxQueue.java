package org.jflannel.backend.wireguard;

import java.nio.ByteBuffer;
import java.util.function.IntConsumer;
import org.jflannel.backend.wireguard.protocol.Device;
import org.jflannel.backend.wireguard.protocol.Endpoint;
import org.jflannel.backend.wireguard.protocol.Messages;
import org.jflannel.backend.wireguard.protocol.Peer;
import org.jflannel.backend.wireguard.protocol.Tally;
import org.jflannel.linuxnet.socket.IoVec;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.socket.UdpBatchSocket;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Packets from the TUN on their way to one endpoint, sealed and sent together. {@link #next} and
 * {@link #commit} (or {@link #add}) take each packet into its slot and reserve its counter in the
 * order the packets came; {@link #flush} seals them all in place, on the TUN thread and the {@link Workers} at once (the counters are already fixed, so
 * the order on the wire is the counters' order), then sends them with one {@code sendmmsg} per
 * {@link UdpBatchSocket#MAX_MESSAGES} messages, each message a run of datagrams of one size (the
 * last may be shorter) sent as one UDP GSO train. A TSO super-packet's segments all seal to one
 * size, so its 45 datagrams make one message. Flushed when full, when a packet for another endpoint
 * comes, and when the TUN is empty. What the kernel refuses (a full socket buffer) is dropped, as a
 * NIC would. What it takes is counted into the peer's sent bytes, one add per flush. One per TUN thread.
 */
final class TxQueue {
    private static final Logger LOG = LoggerFactory.getLogger(TxQueue.class);
    static final int CAPACITY = 128;
    /** UDP GSO: at most 64 segments per send (UDP_MAX_SEGMENTS of older kernels) within one 64 KB datagram. */
    static final int GSO_SEGMENTS = 64;
    static final int GSO_BYTES = 65_000;
    private static final int SLOT = Dataplane.SLOT;

    private final UdpBatchSocket socket;
    private final Workers workers;
    private boolean gso;
    /**
     * One slot per packet: the caller writes the packet at {@link #next}'s offset (after room for the
     * datagram header), and it is sealed there in place: the packet is copied once (from the TUN's
     * buffer) before it is copied into {@link #out} for the kernel.
     */
    private final byte[] slots = new byte[CAPACITY * SLOT];
    private final int[] plainLength = new int[CAPACITY];
    private final Device.Reservation[] reservations = new Device.Reservation[CAPACITY];
    private final Device.Reservation discard = new Device.Reservation();
    private final int[] length = new int[CAPACITY];
    private final ByteBuffer out = ByteBuffer.allocateDirect(CAPACITY * SLOT);
    private final IoVec iov = new IoVec(CAPACITY);
    private final int[] msgFrom = new int[CAPACITY];
    private final int[] msgCount = new int[CAPACITY];
    private final int[] msgSegment = new int[CAPACITY];
    private final IntConsumer sealOne = this::sealOne;
    /** The queued datagrams' bytes, counted for their peer once per flush. */
    private final Tally sent = Tally.sent();
    private Device device;
    private Peer peer;
    private Endpoint to;
    private Endpoint pending;
    private int queued;

    TxQueue(UdpBatchSocket socket, boolean gso, Workers workers) {
        this.socket = socket;
        this.gso = gso;
        this.workers = workers;
        for (int i = 0; i < CAPACITY; i++) {
            reservations[i] = new Device.Reservation();
        }
    }

    /** The array {@link #next}'s offsets point into. */
    byte[] buffer() {
        return slots;
    }

    /**
     * Where the next packet of {@code len} bytes for {@code peer} goes in {@link #buffer}: write it
     * there, then {@link #commit}. Flushes first when the queue is full or holds another endpoint's
     * datagrams. -1 when the packet cannot go (beyond the device MTU: the kernel does not send these).
     */
    int next(Device d, Peer peer, int len) throws NetlinkException {
        if (d.sealedSize(len) > SLOT) {
            return -1;
        }
        Endpoint e = peer.endpoint();
        if (queued > 0 && (queued == CAPACITY || e == null || !e.equals(to) || d != device || peer != this.peer)) {
            flush();
        }
        pending = e;
        return queued * SLOT + Messages.DATA_HEADER;
    }

    /**
     * The packet written at {@link #next}'s offset: its counter reserved now (nothing queued when the device stages it
     * behind a handshake); {@code now} is the device's clock read for the packet's batch ({@link Device#now}).
     */
    void commit(Device d, Peer peer, int len, long now) {
        int at = queued * SLOT + Messages.DATA_HEADER;
        if (pending == null) {
            d.reserve(peer, slots, at, len, discard, now); // counted as a packet without a peer
            return;
        }
        if (!d.reserve(peer, slots, at, len, reservations[queued], now)) {
            return;
        }
        plainLength[queued] = len;
        device = d;
        this.peer = peer;
        to = pending;
        queued++;
    }

    /** {@code pkt[0, len)} for {@code peer}: {@link #next}, a copy, {@link #commit}. */
    void add(Device d, Peer peer, byte[] pkt, int len) throws NetlinkException {
        int at = next(d, peer, len);
        if (at >= 0) {
            System.arraycopy(pkt, 0, slots, at, len);
            commit(d, peer, len, d.now());
        }
    }

    /** Seals and sends what is queued. */
    void flush() throws NetlinkException {
        if (queued == 0) {
            return;
        }
        try {
            workers.run(queued, sealOne);
            int messages = plan();
            int done = send(messages);
            int datagrams = done == messages ? queued : msgFrom[done];
            long bytes = 0;
            for (int i = 0; i < datagrams; i++) {
                bytes += length[i];
            }
            sent.add(peer, bytes); // what the socket took, as the kernel counts a peer's tx_bytes
            sent.flush();
        } finally {
            queued = 0;
        }
    }

    /** Any thread: datagram {@code i} sealed in its slot and copied to its slot of the send buffer. */
    private void sealOne(int i) {
        int at = i * SLOT;
        int n = device.sealReservedInPlace(reservations[i], slots, at, plainLength[i]);
        length[i] = n;
        out.put(at, slots, at, n);
    }

    /** The messages: runs of equal-size datagrams (the last of a run may be shorter) as GSO trains. */
    private int plan() {
        iov.clear();
        int messages = 0;
        for (int i = 0; i < queued; ) {
            int size = length[i];
            int run = 1;
            int runBytes = size;
            if (gso) {
                while (i + run < queued && run < GSO_SEGMENTS && runBytes + length[i + run] <= GSO_BYTES
                        && length[i + run] <= size && length[i + run - 1] == size) {
                    runBytes += length[i + run];
                    run++;
                }
            }
            for (int k = i; k < i + run; k++) {
                iov.add(out, k * SLOT, length[k]);
            }
            msgFrom[messages] = i;
            msgCount[messages] = run;
            msgSegment[messages] = run > 1 ? size : 0;
            messages++;
            i += run;
        }
        return messages;
    }

    /** Sends the planned messages; returns how many the socket took (the rest is dropped). */
    private int send(int messages) throws NetlinkException {
        int done = 0;
        while (done < messages) {
            int k;
            try {
                k = socket.sendMany(iov, msgFrom, msgCount, msgSegment, done, messages, to.high(), to.low(), to.port());
            } catch (NetlinkException e) {
                if (msgSegment[done] == 0) {
                    LOG.debug("wireguard send failed to={} error={}", to, e.getMessage());
                    return done;
                }
                // e.g. EIO: the route's device cannot checksum a GSO train; one datagram per send from now on
                gso = false;
                LOG.warn("wireguard udp gso refused, one datagram per send from now on to={} error={}", to, e.getMessage());
                return done; // this batch is lost, as a NIC would lose it; TCP retransmits
            }
            if (k <= 0) {
                return done; // socket buffer full
            }
            done += k;
        }
        return done;
    }
}
