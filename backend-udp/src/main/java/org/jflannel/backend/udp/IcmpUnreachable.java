package org.jflannel.backend.udp;

import java.nio.ByteBuffer;
import org.jflannel.packet.Ipv4;

/**
 * The ICMP destination-unreachable (network unreachable) reply we write back into the TUN when no
 * peer owns a destination, as upstream's proxy does: from the unreachable destination to the
 * sender, TTL 8, quoting the offender's IP header and first 8 bytes of payload (RFC 792). Never for
 * an ICMP packet (no ICMP about ICMP, and no loops between two nodes) nor for a non-first fragment.
 */
final class IcmpUnreachable {
    static final int TTL = 8;
    static final int TYPE_DEST_UNREACHABLE = 3;
    static final int CODE_NET_UNREACHABLE = 0;
    private static final int ICMP_HEADER = 8;

    private IcmpUnreachable() {
    }

    static boolean eligible(ByteBuffer offender) {
        return Ipv4.protocol(offender) != Ipv4.PROTO_ICMP && Ipv4.firstFragment(offender);
    }

    /**
     * Writes the reply for a valid, eligible {@code offender} into {@code out} (index 0, limit set to
     * the reply's length; {@code out} needs 20 + 8 + 60 + 8 bytes at most).
     */
    static void write(ByteBuffer offender, ByteBuffer out) {
        int quoted = Math.min(Ipv4.headerLength(offender) + 8, Ipv4.totalLength(offender));
        int total = Ipv4.MIN_HEADER + ICMP_HEADER + quoted;
        out.clear();
        out.limit(total);
        out.put(0, (byte) 0x45);
        out.put(1, (byte) 0);
        out.putShort(2, (short) total);
        out.putInt(4, 0); // id 0, no flags, offset 0
        out.put(8, (byte) TTL);
        out.put(9, (byte) Ipv4.PROTO_ICMP);
        out.putShort(10, (short) 0);
        out.putInt(12, Ipv4.destination(offender));
        out.putInt(16, Ipv4.source(offender));
        out.putShort(10, (short) Ipv4.internetChecksum(out, 0, Ipv4.MIN_HEADER));

        int icmp = Ipv4.MIN_HEADER;
        out.put(icmp, (byte) TYPE_DEST_UNREACHABLE);
        out.put(icmp + 1, (byte) CODE_NET_UNREACHABLE);
        out.putShort(icmp + 2, (short) 0);
        out.putInt(icmp + 4, 0); // unused
        for (int i = 0; i < quoted; i++) {
            out.put(icmp + ICMP_HEADER + i, offender.get(i));
        }
        out.putShort(icmp + 2, (short) Ipv4.internetChecksum(out, icmp, ICMP_HEADER + quoted));
    }
}
