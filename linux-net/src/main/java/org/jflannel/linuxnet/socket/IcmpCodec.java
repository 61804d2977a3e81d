package org.jflannel.linuxnet.socket;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.util.Optional;

/**
 * ICMPv4 bytes (RFC 792), pure Java: echo requests to send on a raw socket (the kernel adds the IP
 * header) and the packets a raw socket returns (IP header included) parsed into {@link IcmpMessage}.
 */
final class IcmpCodec {
    static final int IP_HEADER = 20;
    static final int ICMP_HEADER = 8;
    static final int TYPE_ECHO_REPLY = 0;
    static final int TYPE_UNREACHABLE = 3;
    static final int TYPE_ECHO_REQUEST = 8;
    static final int TYPE_TIME_EXCEEDED = 11;

    private IcmpCodec() {
    }

    /**
     * An echo request whose IP packet will be {@code ipLength} bytes long (20-byte header + 8 + payload);
     * the payload is a fixed pattern, so a corrupted echo is still an echo (the kernel checks the checksum).
     */
    static byte[] echoRequest(int id, int seq, int ipLength) {
        if (ipLength < IP_HEADER + ICMP_HEADER || ipLength > 65535) {
            throw new IllegalArgumentException("icmp echo: IP length must be 28..65535, got " + ipLength);
        }
        byte[] b = new byte[ipLength - IP_HEADER];
        b[0] = TYPE_ECHO_REQUEST;
        b[4] = (byte) (id >>> 8);
        b[5] = (byte) id;
        b[6] = (byte) (seq >>> 8);
        b[7] = (byte) seq;
        for (int i = ICMP_HEADER; i < b.length; i++) {
            b[i] = (byte) i;
        }
        int sum = checksum(b, 0, b.length);
        b[2] = (byte) (sum >>> 8);
        b[3] = (byte) sum;
        return b;
    }

    /**
     * Writes an echo request of {@code ipLength} into {@code out} (direct, from 0) and returns its
     * length. The payload is the same pattern as {@link #echoRequest}; {@code payloadSums} caches the
     * payload's 16-bit sum per length, so a probe costs a header write, not a pass over 1,400 bytes.
     */
    static int writeEchoRequest(ByteBuffer out, int id, int seq, int ipLength, java.util.Map<Integer, Long> payloadSums) {
        checkLength(ipLength);
        return writeEchoRequest(out, id, seq, ipLength, payloadSums.computeIfAbsent(ipLength - IP_HEADER, IcmpCodec::payloadSum));
    }

    /** As above with the payload's sum given ({@link #payloadSum} of {@code ipLength - IP_HEADER}). */
    static int writeEchoRequest(ByteBuffer out, int id, int seq, int ipLength, long payloadSum) {
        checkLength(ipLength);
        long sum = payloadSum + (TYPE_ECHO_REQUEST << 8) + (id & 0xffff) + (seq & 0xffff);
        while ((sum >> 16) != 0) {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        out.put(0, (byte) TYPE_ECHO_REQUEST).put(1, (byte) 0).putShort(2, (short) ~sum)
                .putShort(4, (short) id).putShort(6, (short) seq);
        return ipLength - IP_HEADER;
    }

    /** The 16-bit words of the payload pattern of an ICMP message of {@code icmpLength} bytes, summed (not folded). */
    static long payloadSum(int icmpLength) {
        long sum = 0;
        for (int i = ICMP_HEADER; i < icmpLength; i += 2) {
            int hi = i & 0xff;
            int lo = i + 1 < icmpLength ? (i + 1) & 0xff : 0;
            sum += (hi << 8) | lo;
        }
        return sum;
    }

    /** The 16-bit words of {@code b[from, to)} summed (not folded), an odd last byte as the high one of its word. */
    static long payloadSum(ByteBuffer b, int from, int to) {
        long sum = 0;
        for (int i = from; i < to; i += 2) {
            int hi = b.get(i) & 0xff;
            int lo = i + 1 < to ? b.get(i + 1) & 0xff : 0;
            sum += (hi << 8) | lo;
        }
        return sum;
    }

    private static void checkLength(int ipLength) {
        if (ipLength < IP_HEADER + ICMP_HEADER || ipLength > 65535) {
            throw new IllegalArgumentException("icmp echo: IP length must be 28..65535, got " + ipLength);
        }
    }

    /** Fills {@code out} from the ICMP header on with the payload pattern (once per buffer). */
    static void fillPayloadPattern(ByteBuffer out) {
        for (int i = ICMP_HEADER; i < out.capacity(); i++) {
            out.put(i, (byte) i);
        }
    }

    /** The Internet checksum (one's complement of the one's-complement sum of 16-bit words). */
    static int checksum(byte[] b, int from, int to) {
        long sum = 0;
        for (int i = from; i < to; i += 2) {
            int hi = b[i] & 0xff;
            int lo = i + 1 < to ? b[i + 1] & 0xff : 0;
            sum += (hi << 8) | lo;
        }
        while ((sum >> 16) != 0) {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        return (int) (~sum & 0xffff);
    }

    /** {@link #decode}'s fields, in this order, {@link #FIELDS} ints per packet. */
    static final int F_KIND = 0;
    static final int F_CODE = 1;
    static final int F_FROM = 2;
    static final int F_TARGET = 3;
    static final int F_ID = 4;
    static final int F_SEQ = 5;
    static final int F_MTU = 6;
    static final int FIELDS = 7;
    /** F_KIND's values: the kinds by ordinal. */
    static final IcmpMessage.Kind[] KINDS = IcmpMessage.Kind.values();

    /**
     * Parses one packet as a raw ICMP socket hands it over (from position 0 to limit, IP header
     * first). Empty for anything that is not a reply to or an error about an echo request.
     */
    static Optional<IcmpMessage> parse(ByteBuffer p) {
        int[] f = new int[FIELDS];
        if (!decode(p, 0, p.limit(), f, 0)) {
            return Optional.empty();
        }
        return Optional.of(new IcmpMessage(ip(f[F_FROM]), KINDS[f[F_KIND]], f[F_CODE], ip(f[F_TARGET]), f[F_ID],
                f[F_SEQ], f[F_MTU]));
    }

    /**
     * As {@link #parse}, without allocating: decodes the packet at {@code [off, off + len)} of {@code p}
     * (the first {@code len} bytes of it are enough: only headers are read) into {@code out[at ..
     * at + FIELDS)}; addresses as big-endian ints. False (and {@code out} undefined) for anything that
     * is not a reply to or an error about an echo request.
     */
    static boolean decode(ByteBuffer p, int off, int len, int[] out, int at) {
        if (len < IP_HEADER + ICMP_HEADER || (p.get(off) >> 4 & 0xf) != 4) {
            return false;
        }
        int ihl = (p.get(off) & 0x0f) * 4;
        if (ihl < IP_HEADER || len < ihl + ICMP_HEADER || (p.get(off + 9) & 0xff) != 1) {
            return false;
        }
        int from = p.getInt(off + 12);
        int type = p.get(off + ihl) & 0xff;
        int code = p.get(off + ihl + 1) & 0xff;
        if (type == TYPE_ECHO_REPLY) {
            put(out, at, IcmpMessage.Kind.ECHO_REPLY, code, from, from, p.getShort(off + ihl + 4) & 0xffff,
                    p.getShort(off + ihl + 6) & 0xffff, 0);
            return true;
        }
        if (type != TYPE_UNREACHABLE && type != TYPE_TIME_EXCEEDED) {
            return false;
        }
        int inner = ihl + ICMP_HEADER; // the quoted original: its IP header and at least 8 bytes of ICMP
        if (len < inner + IP_HEADER || (p.get(off + inner + 9) & 0xff) != 1) {
            return false;
        }
        int innerIhl = (p.get(off + inner) & 0x0f) * 4;
        int echo = inner + innerIhl;
        if (innerIhl < IP_HEADER || len < echo + ICMP_HEADER || (p.get(off + echo) & 0xff) != TYPE_ECHO_REQUEST) {
            return false;
        }
        IcmpMessage.Kind kind = type == TYPE_UNREACHABLE ? IcmpMessage.Kind.UNREACHABLE : IcmpMessage.Kind.TIME_EXCEEDED;
        int mtu = type == TYPE_UNREACHABLE && code == IcmpMessage.CODE_FRAG_NEEDED ? p.getShort(off + ihl + 6) & 0xffff : 0;
        put(out, at, kind, code, from, p.getInt(off + inner + 16), p.getShort(off + echo + 4) & 0xffff,
                p.getShort(off + echo + 6) & 0xffff, mtu);
        return true;
    }

    private static void put(int[] out, int at, IcmpMessage.Kind kind, int code, int from, int target, int id, int seq,
                            int mtu) {
        out[at + F_KIND] = kind.ordinal();
        out[at + F_CODE] = code;
        out[at + F_FROM] = from;
        out[at + F_TARGET] = target;
        out[at + F_ID] = id;
        out[at + F_SEQ] = seq;
        out[at + F_MTU] = mtu;
    }

    /** An address read as a big-endian int (as {@link #decode} gives it) as an InetAddress. */
    static Inet4Address ip(int a) {
        byte[] b = {(byte) (a >>> 24), (byte) (a >>> 16), (byte) (a >>> 8), (byte) a};
        try {
            return (Inet4Address) InetAddress.getByAddress(b);
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e); // 4 bytes are always an address
        }
    }

    /** {@code struct sockaddr_in} for {@code dst} (a big-endian int), port 0, written at 0 of {@code out}. */
    static void sockaddr(ByteBuffer out, int dst) {
        out.put(0, (byte) 2).put(1, (byte) 0); // AF_INET, host byte order (little-endian on the machines we run on)
        out.put(2, (byte) 0).put(3, (byte) 0);
        out.put(4, (byte) (dst >>> 24)).put(5, (byte) (dst >>> 16)).put(6, (byte) (dst >>> 8)).put(7, (byte) dst);
    }
}
