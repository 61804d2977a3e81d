package org.jflannel.backend.udp;

import java.nio.ByteBuffer;
import java.util.function.Consumer;
import org.jflannel.backend.udp.UdpCounters.Drop;
import org.jflannel.linuxnet.socket.DatagramBatch;
import org.jflannel.linuxnet.socket.IoVec;
import org.jflannel.packet.Ipv4;
import org.jflannel.packet.TrainCoalescer;
import org.jflannel.packet.VnetHdr;

/**
 * What {@link SocketReader} does with one received batch (and the fuzz target with a replayed one):
 * with UDP GRO each slot is a train of one peer's datagrams, cut at the segment size the kernel
 * reports. Every datagram is one inner IP packet, checked by {@link PacketPath#inbound} where it lies
 * (peer, inner source, TTL), then handed to the {@link TrainCoalescer}, which writes it, or the TCP
 * super-packet it joined.
 *
 * <p>A peer whose kernel encapsulates ({@link KernelPath}) sends what its stack made: a whole TCP
 * super-packet in one datagram (longer than flannel0's MTU) and TCP/UDP checksums left partial. Such a
 * packet ({@link PartialChecksum}) bypasses the coalescer and is written with {@code NEEDS_CSUM}, a
 * super-packet as TSO with the segment size flannel0's MTU gives, after what the batch had pending.
 * Not thread-safe: one per reader.
 */
final class Inbound {
    private final PacketPath path;
    private final TrainCoalescer coalescer;
    private final boolean vnetHdr;
    /** flannel0's MTU: a longer inner packet is a super-packet a peer's kernel encapsulated whole. */
    private final int tunMtu;
    private final Consumer<IoVec> write;
    private final IoVec partial = new IoVec(2);
    private final ByteBuffer partialHdr = ByteBuffer.allocateDirect(VnetHdr.LENGTH);

    Inbound(PacketPath path, TrainCoalescer coalescer, boolean vnetHdr, int tunMtu, Consumer<IoVec> write) {
        this.path = path;
        this.coalescer = coalescer;
        this.vnetHdr = vnetHdr;
        this.tunMtu = tunMtu;
        this.write = write;
    }

    /** The first {@code n} slots of {@code batch}, checked, counted and written. */
    void forward(DatagramBatch batch, int n) {
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
        write.accept(partial);
    }
}
