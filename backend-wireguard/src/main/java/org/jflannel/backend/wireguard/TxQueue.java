package org.jflannel.backend.wireguard;

import java.nio.ByteBuffer;
import org.jflannel.backend.wireguard.protocol.Device;
import org.jflannel.backend.wireguard.protocol.Endpoint;
import org.jflannel.backend.wireguard.protocol.Peer;
import org.jflannel.linuxnet.IoVec;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.UdpBatchSocket;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sealed data messages on their way to one endpoint, sent together: packed back to back, then one
 * {@code sendmmsg} per {@link UdpBatchSocket#MAX_MESSAGES} messages, each message a run of
 * datagrams of one size (the last of a run may be shorter) sent as one UDP GSO datagram train. A
 * TSO super-packet's segments all seal to one size, so its 45 datagrams make one message. Sent
 * when the queue is full, when a datagram for another endpoint comes, and when the TUN is empty.
 * What the kernel refuses (a full socket buffer) is dropped, as a NIC would. One per TUN thread.
 */
final class TxQueue {
    private static final Logger LOG = LoggerFactory.getLogger(TxQueue.class);
    static final int CAPACITY = 128;
    /** UDP GSO: at most 64 segments per send (UDP_MAX_SEGMENTS of older kernels) within one 64 KB datagram. */
    static final int GSO_SEGMENTS = 64;
    static final int GSO_BYTES = 65_000;

    private final UdpBatchSocket socket;
    private boolean gso;
    private final byte[] sealed = new byte[CAPACITY * Dataplane.SLOT];
    private final ByteBuffer out = ByteBuffer.allocateDirect(CAPACITY * Dataplane.SLOT);
    private final int[] length = new int[CAPACITY];
    private final IoVec iov = new IoVec(CAPACITY);
    private final int[] msgFrom = new int[CAPACITY];
    private final int[] msgCount = new int[CAPACITY];
    private final int[] msgSegment = new int[CAPACITY];
    private Endpoint to;
    private int queued;
    private int bytes;

    TxQueue(UdpBatchSocket socket, boolean gso) {
        this.socket = socket;
        this.gso = gso;
    }

    /** Seals {@code pkt[0, len)} for {@code peer} into the queue (nothing when the device stages it behind a handshake). */
    void seal(Device d, Peer peer, byte[] pkt, int len) throws NetlinkException {
        if (d.sealedSize(len) > Dataplane.SLOT) {
            return; // beyond the device MTU: the kernel does not send these
        }
        if (queued == CAPACITY) {
            flush();
        }
        int n = d.seal(peer, pkt, 0, len, sealed, bytes);
        if (n == 0) {
            return;
        }
        Endpoint e = peer.endpoint();
        if (queued > 0 && !e.equals(to)) {
            // sealed already behind the others: send those, then move this one to the front
            int at = bytes;
            sendQueued();
            System.arraycopy(sealed, at, sealed, 0, n);
        }
        to = e;
        length[queued++] = n;
        bytes += n;
    }

    /** Sends what is queued. */
    void flush() throws NetlinkException {
        if (queued > 0) {
            sendQueued();
        }
    }

    private void sendQueued() throws NetlinkException {
        out.put(0, sealed, 0, bytes);
        iov.clear();
        int messages = 0;
        int at = 0;
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
            iov.add(out, at, runBytes);
            msgFrom[messages] = messages;
            msgCount[messages] = 1;
            msgSegment[messages] = run > 1 ? size : 0;
            messages++;
            at += runBytes;
            i += run;
        }
        try {
            send(messages);
        } finally {
            queued = 0;
            bytes = 0;
        }
    }

    private void send(int messages) throws NetlinkException {
        for (int done = 0; done < messages; ) {
            int k;
            try {
                k = socket.sendMany(iov, msgFrom, msgCount, msgSegment, done, messages, to.address(), to.port());
            } catch (NetlinkException e) {
                if (msgSegment[done] == 0) {
                    LOG.debug("wireguard send failed to={} error={}", to, e.getMessage());
                    return;
                }
                // e.g. EIO: the route's device cannot checksum a GSO train; one datagram per send from now on
                gso = false;
                LOG.warn("wireguard udp gso refused, one datagram per send from now on to={} error={}", to, e.getMessage());
                return; // this batch is lost, as a NIC would lose it; TCP retransmits
            }
            if (k <= 0) {
                return; // socket buffer full
            }
            done += k;
        }
    }
}
