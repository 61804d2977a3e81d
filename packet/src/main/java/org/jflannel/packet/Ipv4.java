package org.jflannel.packet;

import java.nio.ByteBuffer;
import org.jflannel.core.Ip4Net;

/**
 * IPv4 header access on a packet that starts at index 0 of a buffer and ends at its limit (absolute
 * gets and puts: the buffer's position is never moved). Only what forwarding needs: validation,
 * addresses, protocol, fragment offset, the header checksum and the TTL decrement of RFC 1624.
 */
public final class Ipv4 {
    public static final int MIN_HEADER = 20;
    public static final int PROTO_ICMP = 1;
    private static final int TTL = 8;
    private static final int CHECKSUM = 10;

    private Ipv4() {
    }

    public static int version(ByteBuffer p) {
        return p.limit() == 0 ? 0 : (p.get(0) & 0xf0) >>> 4;
    }

    /** True when the buffer holds a whole IPv4 header and the total length fits in it. */
    public static boolean valid(ByteBuffer p) {
        return valid(p, 0, p.limit());
    }

    /** {@link #valid(ByteBuffer)} for the packet at {@code [at, at + len)} of a larger buffer. */
    public static boolean valid(ByteBuffer p, int at, int len) {
        if (len < MIN_HEADER || (p.get(at) & 0xf0) != 0x40) {
            return false;
        }
        int ihl = headerLength(p, at);
        int total = totalLength(p, at);
        return ihl >= MIN_HEADER && ihl <= len && total >= ihl && total <= len;
    }

    public static int headerLength(ByteBuffer p) {
        return headerLength(p, 0);
    }

    public static int headerLength(ByteBuffer p, int at) {
        return (p.get(at) & 0x0f) * 4;
    }

    public static int totalLength(ByteBuffer p) {
        return totalLength(p, 0);
    }

    public static int totalLength(ByteBuffer p, int at) {
        return p.getShort(at + 2) & 0xffff;
    }

    public static int ttl(ByteBuffer p) {
        return p.get(TTL) & 0xff;
    }

    public static int protocol(ByteBuffer p) {
        return p.get(9) & 0xff;
    }

    public static int protocol(ByteBuffer p, int at) {
        return p.get(at + 9) & 0xff;
    }

    public static int checksum(ByteBuffer p) {
        return p.getShort(CHECKSUM) & 0xffff;
    }

    public static int source(ByteBuffer p) {
        return p.getInt(12);
    }

    public static int source(ByteBuffer p, int at) {
        return p.getInt(at + 12);
    }

    public static int destination(ByteBuffer p) {
        return p.getInt(16);
    }

    public static int destination(ByteBuffer p, int at) {
        return p.getInt(at + 16);
    }

    /** Fragment offset zero: the first (or only) fragment, the one that carries the transport header. */
    public static boolean firstFragment(ByteBuffer p) {
        return firstFragment(p, 0);
    }

    public static boolean firstFragment(ByteBuffer p, int at) {
        return (p.getShort(at + 6) & 0x1fff) == 0;
    }

    /**
     * Decrements the TTL and patches the header checksum incrementally (RFC 1624 eqn. 3,
     * {@code HC' = ~(~HC + ~m + m')}, which never yields the 0xFFFF that eqn. 2 can). Returns false,
     * leaving the packet untouched, when the TTL would reach 0 (or already is 0): drop it.
     */
    public static boolean decrementTtl(ByteBuffer p) {
        return decrementTtl(p, 0);
    }

    /** {@link #decrementTtl(ByteBuffer)} for the packet starting at {@code at}. */
    public static boolean decrementTtl(ByteBuffer p, int at) {
        int ttl = p.get(at + TTL) & 0xff;
        if (ttl <= 1) {
            return false;
        }
        int old = p.getShort(at + TTL) & 0xffff; // TTL is the high byte of the 16-bit word it shares with the protocol
        int now = old - 0x100;
        int sum = (~p.getShort(at + CHECKSUM) & 0xffff) + (~old & 0xffff) + now;
        sum = fold(sum);
        p.put(at + TTL, (byte) (ttl - 1));
        p.putShort(at + CHECKSUM, (short) ~sum);
        return true;
    }

    /** The Internet checksum (RFC 1071) of {@code len} bytes from {@code from}. */
    public static int internetChecksum(ByteBuffer p, int from, int len) {
        return ~sum(p, from, len) & 0xffff;
    }

    /**
     * The one's complement sum of {@code len} bytes from {@code from} as 16-bit big-endian words,
     * folded to 16 bits, not inverted. Eight bytes per step: the two 32-bit halves of each word are
     * added into a 64-bit accumulator, whose carries are folded back at the end (RFC 1071: the sum
     * does not depend on how the words are grouped). This is the per-byte cost of the packet paths.
     */
    public static int sum(ByteBuffer p, int from, int len) {
        long sum = 0;
        int i = from;
        int end = from + len;
        for (; i + 8 <= end; i += 8) {
            long v = p.getLong(i);
            sum += (v >>> 32) + (v & 0xffffffffL);
        }
        if (i + 4 <= end) {
            sum += p.getInt(i) & 0xffffffffL;
            i += 4;
        }
        if (i + 2 <= end) {
            sum += p.getShort(i) & 0xffff;
            i += 2;
        }
        if (i < end) {
            sum += (p.get(i) & 0xff) << 8;
        }
        sum = (sum & 0xffffffffL) + (sum >>> 32);
        sum = (sum & 0xffffffffL) + (sum >>> 32);
        return fold((int) (sum & 0xffff) + (int) (sum >>> 16));
    }

    /** Checksum of the header as it should be: computed over the header with the checksum field taken as zero. */
    public static int headerChecksumFromScratch(ByteBuffer p) {
        int stored = p.getShort(CHECKSUM);
        p.putShort(CHECKSUM, (short) 0);
        int c = internetChecksum(p, 0, headerLength(p));
        p.putShort(CHECKSUM, (short) stored);
        return c;
    }

    public static String describe(int address) {
        return Ip4Net.formatAddress(address);
    }

    private static int fold(int sum) {
        while ((sum >>> 16) != 0) {
            sum = (sum & 0xffff) + (sum >>> 16);
        }
        return sum;
    }
}
