package org.jflannel.backend.udp;

import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.locks.LockSupport;
import org.jflannel.backend.udp.UdpCounters.Drop;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.socket.DatagramBatch;
import org.jflannel.linuxnet.socket.IoVec;
import org.jflannel.linuxnet.socket.UdpBatchSocket;
import org.jflannel.linuxnet.tun.TunDevice;
import org.jflannel.packet.Ipv4;
import org.jflannel.packet.TrainCoalescer;
import org.jflannel.packet.VnetHdr;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * UDP → TUN on one platform thread per socket ({@code udp-sock-rx-<i>}): one {@code recvmmsg}
 * fills a {@link DatagramBatch}; with UDP GRO each slot is a train of one peer's datagrams, cut at
 * the segment size the kernel reports. Every datagram is one inner IP packet, checked by
 * {@link PacketPath#inbound} where it lies (peer, inner source, TTL), then handed to the
 * {@link TrainCoalescer}, which writes it, or the TCP super-packet it joined, to this reader's TUN
 * queue by {@code writev}. Nothing is copied in Java and nothing is allocated per packet. The
 * socket's receive timeout bounds each wait, so {@link #close()} is noticed within it.
 *
 * <p>A peer whose kernel encapsulates ({@link KernelPath}) sends what its stack made: a whole TCP
 * super-packet in one datagram (longer than flannel0's MTU) and TCP/UDP checksums left partial. Such a
 * packet ({@link PartialChecksum}) bypasses the coalescer and is written with {@code NEEDS_CSUM}, a
 * super-packet as TSO with the segment size flannel0's MTU gives, after what the batch had pending.
 */
final class SocketReader implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(SocketReader.class);
    /** With GRO a slot takes a train of up to 64 KB; without, one datagram of at most {@link #room}. */
    static final int GRO_SLOTS = 16;
    static final int PLAIN_SLOTS = 64;
    static final int GRO_SLOT_SIZE = 65_536;
    private static final Duration ERROR_PAUSE = Duration.ofMillis(100);

    private final UdpBatchSocket socket;
    private final TunDevice tun;
    private final PacketPath path;
    private final DatagramBatch batch;
    private final TrainCoalescer coalescer;
    private final Thread thread;
    /** flannel0's MTU: a longer inner packet is a super-packet a peer's kernel encapsulated whole. */
    private final int tunMtu;
    private final boolean vnetHdr;
    private final IoVec partial = new IoVec(2);
    private final ByteBuffer partialHdr = ByteBuffer.allocateDirect(VnetHdr.LENGTH);
    private volatile boolean stopped;

    private SocketReader(UdpBatchSocket socket, int index, TunDevice tun, boolean vnetHdr, boolean gro, boolean coalesce,
            boolean verifyChecksums, int maxDatagram, int tunMtu, PacketPath path) {
        this.socket = socket;
        this.tunMtu = tunMtu;
        this.vnetHdr = vnetHdr;
        this.tun = tun;
        this.path = path;
        this.batch = gro ? new DatagramBatch(GRO_SLOTS, GRO_SLOT_SIZE) : new DatagramBatch(PLAIN_SLOTS, room(maxDatagram));
        this.coalescer = new TrainCoalescer(vnetHdr, coalesce, verifyChecksums, this::write);
        this.thread = new Thread(this::loop, "udp-sock-rx-" + index);
        this.thread.setDaemon(true);
    }

    /**
     * @param gro             UDP_GRO is on for the socket: slots hold trains
     * @param verifyChecksums sum each TCP segment before merging it (see {@link TrainCoalescer})
     * @param maxDatagram     the external MTU: room per slot without GRO (jumbo frames of peers still fit)
     */
    static SocketReader start(UdpBatchSocket socket, int index, TunDevice tun, boolean vnetHdr, boolean gro,
            boolean coalesce, boolean verifyChecksums, int maxDatagram, int tunMtu, PacketPath path) {
        SocketReader r = new SocketReader(socket, index, tun, vnetHdr, gro, coalesce, verifyChecksums, maxDatagram, tunMtu, path);
        r.thread.start();
        return r;
    }

    static int room(int maxDatagram) {
        return Math.min(Math.max(maxDatagram, 9000), TunReader.MAX_PACKET);
    }

    private void loop() {
        LOG.debug("socket reader started socket={} dev={}", socket, tun.name());
        boolean errorLogged = false;
        while (!stopped) {
            try {
                int n = socket.receive(batch);
                if (n > 0) {
                    forward(n);
                }
            } catch (NetlinkException e) {
                if (stopped) {
                    break;
                }
                if (!errorLogged) {
                    LOG.error("socket reader failed socket={} error={} (retrying; later errors at DEBUG)", socket, e.getMessage());
                    errorLogged = true;
                } else {
                    LOG.debug("socket reader failed socket={} error={}", socket, e.getMessage());
                }
                LockSupport.parkNanos(ERROR_PAUSE.toNanos());
            } catch (RuntimeException e) {
                coalescer.flush();
                path.drop(Drop.MALFORMED, "datagram dropped reason=exception error={}", e.toString());
            }
        }
        LOG.debug("socket reader stopped socket={}", socket);
    }

    private void forward(int n) {
        ByteBuffer data = batch.data();
        long bytes = 0;
        int packets = 0;
        int trains = 0;
        long mergedBefore = coalescer.mergedSegments();
        long writesBefore = coalescer.packetsWritten();
        for (int i = 0; i < n; i++) {
            int start = batch.offset(i);
            int len = batch.length(i);
            if (batch.truncated(i)) {
                path.drop(Drop.MALFORMED, "datagram dropped reason=truncated from={} length={}",
                        Ipv4.describe(batch.senderAddress(i)), len);
                continue;
            }
            int sender = batch.senderAddress(i);
            int step = Math.max(1, batch.segmentSize(i));
            if (step < len) {
                trains++;
            }
            for (int at = start, end = start + len; at < end; at += step) {
                int seg = Math.min(step, end - at);
                if (path.inbound(data, at, seg, sender)) {
                    // trailing bytes after the IP packet (if any) stay out
                    int plen = Ipv4.totalLength(data, at);
                    if (vnetHdr && PartialChecksum.offset(data, at, plen) > 0) {
                        coalescer.flush(); // this flow's earlier packets first
                        writePartial(data, at, plen);
                    } else {
                        coalescer.offer(data, at, plen);
                    }
                    bytes += seg;
                    packets++;
                }
            }
        }
        coalescer.flush();
        path.counters().received(bytes, packets);
        path.counters().batch(trains, coalescer.mergedSegments() - mergedBefore, coalescer.packetsWritten() - writesBefore);
    }

    /**
     * A packet a peer's kernel encapsulated as its stack left it: transport checksum partial (the
     * pseudo-header sum), and for TCP maybe a whole super-packet; written with NEEDS_CSUM (and TSO)
     * as the peer's kernel would hand it to a device that offloads both.
     */
    private void writePartial(ByteBuffer b, int at, int len) {
        int ihl = Ipv4.headerLength(b, at);
        int csumOffset = PartialChecksum.offset(b, at, len);
        if (len > tunMtu && csumOffset == PartialChecksum.TCP_CSUM) {
            int hl = ihl + PartialChecksum.tcpHeaderLength(b, at + ihl);
            VnetHdr.writeGso(partialHdr, VnetHdr.GSO_TCPV4, hl, tunMtu - hl, ihl, csumOffset);
        } else {
            VnetHdr.writeGso(partialHdr, VnetHdr.GSO_NONE, 0, 0, ihl, csumOffset);
        }
        partial.clear().add(partialHdr, 0, VnetHdr.LENGTH).add(b, at, len);
        write(partial);
    }

    private void write(IoVec packet) {
        try {
            tun.writev(packet);
        } catch (NetlinkException e) {
            path.drop(Drop.TUN_WRITE_FAILED, "packet to tun dropped reason=write-failed error={}", e.getMessage());
        }
    }

    /** Stops the thread and waits for it (at most a receive timeout or two). */
    @Override
    public void close() {
        stopped = true;
        PacketThreads.awaitStop(thread, LOG, "socket reader", "socket=" + socket);
    }
}
