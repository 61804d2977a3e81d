package org.jflannel.linuxnet;

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
        if (ipLength < IP_HEADER + ICMP_HEADER || ipLength > 65535) {
            throw new IllegalArgumentException("icmp echo: IP length must be 28..65535, got " + ipLength);
        }
        int len = ipLength - IP_HEADER;
        long payload = payloadSums.computeIfAbsent(len, l -> {
            long sum = 0;
            for (int i = ICMP_HEADER; i < l; i += 2) {
                int hi = i & 0xff;
                int lo = i + 1 < l ? (i + 1) & 0xff : 0;
                sum += (hi << 8) | lo;
            }
            return sum;
        });
        long sum = payload + (TYPE_ECHO_REQUEST << 8) + (id & 0xffff) + (seq & 0xffff);
        while ((sum >> 16) != 0) {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        out.put(0, (byte) TYPE_ECHO_REQUEST).put(1, (byte) 0).putShort(2, (short) ~sum)
                .putShort(4, (short) id).putShort(6, (short) seq);
        return len;
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

    /**
     * Parses one packet as a raw ICMP socket hands it over (from position 0 to limit, IP header
     * first). Empty for anything that is not a reply to or an error about an echo request.
     */
    static Optional<IcmpMessage> parse(ByteBuffer p) {
        int len = p.limit();
        if (len < IP_HEADER + ICMP_HEADER || (p.get(0) >> 4 & 0xf) != 4) {
            return Optional.empty();
        }
        int ihl = (p.get(0) & 0x0f) * 4;
        if (ihl < IP_HEADER || len < ihl + ICMP_HEADER || (p.get(9) & 0xff) != 1) {
            return Optional.empty();
        }
        Inet4Address from = ip(p, 12);
        int type = p.get(ihl) & 0xff;
        int code = p.get(ihl + 1) & 0xff;
        if (type == TYPE_ECHO_REPLY) {
            return Optional.of(new IcmpMessage(from, IcmpMessage.Kind.ECHO_REPLY, code, from,
                    p.getShort(ihl + 4) & 0xffff, p.getShort(ihl + 6) & 0xffff, 0));
        }
        if (type != TYPE_UNREACHABLE && type != TYPE_TIME_EXCEEDED) {
            return Optional.empty();
        }
        int inner = ihl + ICMP_HEADER; // the quoted original: its IP header and at least 8 bytes of ICMP
        if (len < inner + IP_HEADER || (p.get(inner + 9) & 0xff) != 1) {
            return Optional.empty();
        }
        int innerIhl = (p.get(inner) & 0x0f) * 4;
        int echo = inner + innerIhl;
        if (innerIhl < IP_HEADER || len < echo + ICMP_HEADER || (p.get(echo) & 0xff) != TYPE_ECHO_REQUEST) {
            return Optional.empty();
        }
        IcmpMessage.Kind kind = type == TYPE_UNREACHABLE ? IcmpMessage.Kind.UNREACHABLE : IcmpMessage.Kind.TIME_EXCEEDED;
        int mtu = type == TYPE_UNREACHABLE && code == IcmpMessage.CODE_FRAG_NEEDED ? p.getShort(ihl + 6) & 0xffff : 0;
        return Optional.of(new IcmpMessage(from, kind, code, ip(p, inner + 16), p.getShort(echo + 4) & 0xffff,
                p.getShort(echo + 6) & 0xffff, mtu));
    }

    private static Inet4Address ip(ByteBuffer p, int at) {
        byte[] a = new byte[4];
        for (int i = 0; i < 4; i++) {
            a[i] = p.get(at + i);
        }
        try {
            return (Inet4Address) InetAddress.getByAddress(a);
        } catch (UnknownHostException e) {
            throw new IllegalStateException(e); // 4 bytes are always an address
        }
    }

    /** {@code struct sockaddr_in} for {@code dst}, port 0. */
    static byte[] sockaddr(Inet4Address dst) {
        byte[] sa = new byte[16];
        sa[0] = 2; // AF_INET, host byte order (little-endian on the machines we run on)
        System.arraycopy(dst.getAddress(), 0, sa, 4, 4);
        return sa;
    }
}
