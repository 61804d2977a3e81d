package org.jflannel.backend.udp;

import java.nio.ByteBuffer;
import org.jflannel.core.Ip4Net;

/**
 * IPv4 header access on a packet that starts at index 0 of a buffer and ends at its limit (absolute
 * gets and puts: the buffer's position is never moved). Only what forwarding needs: validation,
 * addresses, protocol, fragment offset, the header checksum and the TTL decrement of RFC 1624.
 */
final class Ipv4 {
    static final int MIN_HEADER = 20;
    static final int PROTO_ICMP = 1;
    private static final int TTL = 8;
    private static final int CHECKSUM = 10;

    private Ipv4() {
    }

    static int version(ByteBuffer p) {
        return p.limit() == 0 ? 0 : (p.get(0) & 0xf0) >>> 4;
    }

    /** True when the buffer holds a whole IPv4 header and the total length fits in it. */
    static boolean valid(ByteBuffer p) {
        int len = p.limit();
        if (len < MIN_HEADER || version(p) != 4) {
            return false;
        }
        int ihl = headerLength(p);
        int total = totalLength(p);
        return ihl >= MIN_HEADER && ihl <= len && total >= ihl && total <= len;
    }

    static int headerLength(ByteBuffer p) {
        return (p.get(0) & 0x0f) * 4;
    }

    static int totalLength(ByteBuffer p) {
        return p.getShort(2) & 0xffff;
    }

    static int ttl(ByteBuffer p) {
        return p.get(TTL) & 0xff;
    }

    static int protocol(ByteBuffer p) {
        return p.get(9) & 0xff;
    }

    static int checksum(ByteBuffer p) {
        return p.getShort(CHECKSUM) & 0xffff;
    }

    static int source(ByteBuffer p) {
        return p.getInt(12);
    }

    static int destination(ByteBuffer p) {
        return p.getInt(16);
    }

    /** Fragment offset zero: the first (or only) fragment, the one that carries the transport header. */
    static boolean firstFragment(ByteBuffer p) {
        return (p.getShort(6) & 0x1fff) == 0;
    }

    /**
     * Decrements the TTL and patches the header checksum incrementally (RFC 1624 eqn. 3,
     * {@code HC' = ~(~HC + ~m + m')}, which never yields the 0xFFFF that eqn. 2 can). Returns false,
     * leaving the packet untouched, when the TTL would reach 0 (or already is 0): drop it.
     */
    static boolean decrementTtl(ByteBuffer p) {
        int ttl = ttl(p);
        if (ttl <= 1) {
            return false;
        }
        int old = p.getShort(TTL) & 0xffff; // TTL is the high byte of the 16-bit word it shares with the protocol
        int now = old - 0x100;
        int sum = (~checksum(p) & 0xffff) + (~old & 0xffff) + now;
        sum = fold(sum);
        p.put(TTL, (byte) (ttl - 1));
        p.putShort(CHECKSUM, (short) ~sum);
        return true;
    }

    /** The Internet checksum (RFC 1071) of {@code len} bytes from {@code from}. */
    static int internetChecksum(ByteBuffer p, int from, int len) {
        int sum = 0;
        int i = from;
        for (; i + 1 < from + len; i += 2) {
            sum += p.getShort(i) & 0xffff;
        }
        if (i < from + len) {
            sum += (p.get(i) & 0xff) << 8;
        }
        return ~fold(sum) & 0xffff;
    }

    /** Checksum of the header as it should be: computed over the header with the checksum field taken as zero. */
    static int headerChecksumFromScratch(ByteBuffer p) {
        int stored = p.getShort(CHECKSUM);
        p.putShort(CHECKSUM, (short) 0);
        int c = internetChecksum(p, 0, headerLength(p));
        p.putShort(CHECKSUM, (short) stored);
        return c;
    }

    static String describe(int address) {
        return Ip4Net.formatAddress(address);
    }

    private static int fold(int sum) {
        while ((sum >>> 16) != 0) {
            sum = (sum & 0xffff) + (sum >>> 16);
        }
        return sum;
    }
}
