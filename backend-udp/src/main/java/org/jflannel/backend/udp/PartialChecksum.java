package org.jflannel.backend.udp;

import java.nio.ByteBuffer;
import org.jflannel.packet.Ipv4;

/**
 * Recognises an inner packet whose TCP or UDP checksum is partial: the field holds only the
 * pseudo-header sum, as the sender's stack leaves it for a device that offloads the checksum.
 * Such packets come from a peer whose kernel datapath encapsulated them as they were (upstream
 * nodes and our packet threads always send complete checksums). A complete checksum equals the
 * pseudo-header sum only by chance (1 in 65,535), and then the packet is still delivered intact:
 * NEEDS_CSUM makes the receiving stack trust it instead of checking it.
 */
final class PartialChecksum {
    static final int TCP_CSUM = 16;
    static final int UDP_CSUM = 6;
    private static final int TCP = 6;
    private static final int UDP = 17;

    private PartialChecksum() {
    }

    /**
     * The checksum field's offset in the transport header (16 TCP, 6 UDP) when the packet at
     * {@code [at, at + len)} is an unfragmented TCP or UDP packet with a partial checksum; 0 otherwise.
     */
    static int offset(ByteBuffer b, int at, int len) {
        int proto = Ipv4.protocol(b, at);
        if (proto != TCP && proto != UDP) {
            return 0;
        }
        int ihl = Ipv4.headerLength(b, at);
        int off = proto == TCP ? TCP_CSUM : UDP_CSUM;
        if ((b.getShort(at + 6) & 0x3fff) != 0 || len < ihl + off + 2) {
            return 0;
        }
        long sum = (b.getShort(at + 12) & 0xffff) + (b.getShort(at + 14) & 0xffff)
                + (b.getShort(at + 16) & 0xffff) + (b.getShort(at + 18) & 0xffff) + proto + (len - ihl);
        while ((sum >>> 16) != 0) {
            sum = (sum & 0xffff) + (sum >>> 16);
        }
        int field = b.getShort(at + ihl + off) & 0xffff;
        // a UDP checksum 0 means "none"; a computed one is never 0
        return field != 0 && field == sum ? off : 0;
    }

    static int tcpHeaderLength(ByteBuffer b, int tcp) {
        return ((b.get(tcp + 12) & 0xf0) >>> 4) * 4;
    }
}
