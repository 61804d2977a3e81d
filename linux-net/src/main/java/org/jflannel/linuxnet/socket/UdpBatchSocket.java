package org.jflannel.linuxnet.socket;

import com.sun.jna.LastErrorException;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.internal.Errno;
import org.jflannel.linuxnet.internal.Fd;
import org.jflannel.linuxnet.internal.LibC;

/**
 * A UDP socket (IPv4, or IPv6: bound to a v6 address it is IPv6 only, bound to {@code ::} it takes
 * both families, IPv4 peers as {@code ::ffff:a.b.c.d}) for a packet path, with the kernel's batching offloads: {@code recvmmsg} into a
 * {@link DatagramBatch} (with UDP GRO a slot holds a whole train of one sender's datagrams and its
 * segment size), {@code sendmsg} from an {@link IoVec} (with UDP GSO, {@code UDP_SEGMENT}, one call
 * sends many equal-sized datagrams). It belongs to the network namespace of the thread that binds
 * it. One thread receives at a time; sends are serialized (the send header is reused), which costs
 * an uncontended lock when one thread sends.
 */
public final class UdpBatchSocket implements AutoCloseable {
    private static final int MSGHDR = 56;
    /** Room for a sockaddr_in6 (28 bytes; a sockaddr_in takes the first 16), rounded to 8. */
    private static final int SOCKADDR = 32;
    private static final int SOCKADDR_IN = 16;
    private static final int SOCKADDR_IN6 = 28;
    /** The high 64 bits of an IPv4-mapped address {@code ::ffff:0:0/96} hold 0; the low ones start 0x0000ffff. */
    private static final long MAPPED = 0xffffL << 32;
    /** CMSG_SPACE(sizeof(uint16_t)); the kernel wants cmsg_len exactly CMSG_LEN(2) = 18. */
    private static final int GSO_CONTROL = 24;

    private final Fd fd;
    private final String what;
    private final boolean ipv6;
    /** msghdr | sockaddr | control, for sends. */
    private final ByteBuffer send = ByteBuffer.allocateDirect(MSGHDR + SOCKADDR + GSO_CONTROL).order(ByteOrder.nativeOrder());
    private final long sendAddress = LibC.address(send);
    /** struct mmsghdr[MAX_MESSAGES] | sockaddr | control per message, for {@link #sendMany}. */
    private final ByteBuffer many = ByteBuffer.allocateDirect(MAX_MESSAGES * (MMSGHDR + GSO_CONTROL) + SOCKADDR)
            .order(ByteOrder.nativeOrder());
    private final long manyAddress = LibC.address(many);
    /** Messages one {@link #sendMany} call takes at most. */
    public static final int MAX_MESSAGES = 8;
    private static final int MMSGHDR = 64; // struct msghdr + unsigned int msg_len, padded
    private static final int MANY_NAME = MAX_MESSAGES * MMSGHDR;
    private static final int MANY_CONTROL = MANY_NAME + SOCKADDR;

    /** Socket options: SO_REUSEPORT (several sockets share the port), buffer sizes (0: the kernel's default). */
    public record Options(boolean reusePort, int receiveBuffer, int sendBuffer, int timeoutMillis) {
        public Options {
            if (receiveBuffer < 0 || sendBuffer < 0 || timeoutMillis < 0) {
                throw new IllegalArgumentException("udp socket options: sizes and timeout must be >= 0");
            }
        }
    }

    private UdpBatchSocket(Fd fd, String what, boolean ipv6) {
        this.fd = fd;
        this.what = what;
        this.ipv6 = ipv6;
        int family = ipv6 ? LibC.AF_INET6 : LibC.AF_INET;
        int nameLength = ipv6 ? SOCKADDR_IN6 : SOCKADDR_IN;
        send.putLong(0, sendAddress + MSGHDR);        // msg_name
        send.putInt(8, nameLength);                   // msg_namelen
        send.putShort(MSGHDR, (short) family);        // sin_family / sin6_family
        many.putShort(MANY_NAME, (short) family);
        for (int i = 0; i < MAX_MESSAGES; i++) {
            int m = i * MMSGHDR;
            many.putLong(m, manyAddress + MANY_NAME);  // msg_name: one address for all
            many.putInt(m + 8, nameLength);
            int c = MANY_CONTROL + i * GSO_CONTROL;
            many.putLong(c, 18);                       // cmsg_len = CMSG_LEN(2)
            many.putInt(c + 8, LibC.SOL_UDP);
            many.putInt(c + 12, LibC.UDP_SEGMENT);
        }
    }

    /**
     * Binds {@code address:port}: an {@link Inet4Address} makes an AF_INET socket, an
     * {@link Inet6Address} an AF_INET6 one, IPv6 only unless the address is {@code ::} (then IPv4
     * peers too, as mapped addresses). Receives and sends block at most {@code timeoutMillis} (then
     * report nothing received / EAGAIN), so a reader notices a stop request.
     */
    public static UdpBatchSocket bind(InetAddress address, int port, Options options) throws NetlinkException {
        boolean v6 = address instanceof Inet6Address;
        String host = new org.jflannel.linuxnet.netlink.IpPrefix(address, v6 ? 128 : 32).toString().replaceFirst("/\\d+$", "");
        String what = "udp " + (v6 ? "[" + host + "]" : host) + ":" + port; // IPv6 compressed: [::]:51820
        Fd fd;
        try {
            fd = new Fd(LibC.socket(v6 ? LibC.AF_INET6 : LibC.AF_INET, LibC.SOCK_DGRAM | LibC.SOCK_CLOEXEC, 0), what);
        } catch (LastErrorException e) {
            throw new NetlinkException("socket", what, e.getErrorCode(), "");
        }
        UdpBatchSocket s = new UdpBatchSocket(fd, what, v6);
        try {
            if (v6) {
                // explicit either way: net.ipv6.bindv6only must not decide which peers we hear
                s.setInt(LibC.IPPROTO_IPV6, LibC.IPV6_V6ONLY, address.isAnyLocalAddress() ? 0 : 1, "IPV6_V6ONLY");
            }
            if (options.reusePort()) {
                s.setInt(LibC.SOL_SOCKET, LibC.SO_REUSEPORT, 1, "SO_REUSEPORT");
            }
            if (options.receiveBuffer() > 0) {
                s.setBuffer(LibC.SO_RCVBUFFORCE, LibC.SO_RCVBUF, options.receiveBuffer());
            }
            if (options.sendBuffer() > 0) {
                s.setBuffer(LibC.SO_SNDBUFFORCE, LibC.SO_SNDBUF, options.sendBuffer());
            }
            if (options.timeoutMillis() > 0) {
                s.setTimeout(LibC.SO_RCVTIMEO, options.timeoutMillis());
                s.setTimeout(LibC.SO_SNDTIMEO, options.timeoutMillis());
            }
            byte[] sa = new byte[SOCKADDR];
            sa[0] = (byte) (v6 ? LibC.AF_INET6 : LibC.AF_INET); // little-endian sa_family
            sa[2] = (byte) (port >>> 8);
            sa[3] = (byte) port;
            if (v6) {
                System.arraycopy(address.getAddress(), 0, sa, 8, 16); // after sin6_flowinfo
                int scope = ((Inet6Address) address).getScopeId();
                sa[24] = (byte) scope;
                sa[25] = (byte) (scope >>> 8);
                sa[26] = (byte) (scope >>> 16);
                sa[27] = (byte) (scope >>> 24);
            } else {
                System.arraycopy(address.getAddress(), 0, sa, 4, 4);
            }
            LibC.bind(fd.get(), sa, v6 ? SOCKADDR_IN6 : SOCKADDR_IN);
        } catch (LastErrorException e) {
            fd.close();
            throw new NetlinkException("bind", what, e.getErrorCode(), "");
        } catch (NetlinkException | RuntimeException e) {
            fd.close();
            throw e;
        }
        return s;
    }

    /** setsockopt(UDP_GRO): the kernel then hands trains of datagrams up as one. False when refused. */
    public boolean enableGro() {
        return trySetInt(LibC.SOL_UDP, LibC.UDP_GRO, 1);
    }

    /** True when the kernel knows UDP_SEGMENT (UDP GSO; Linux 4.18+): probed by setting the socket default to 0 (off). */
    public boolean gsoSupported() {
        return trySetInt(LibC.SOL_UDP, LibC.UDP_SEGMENT, 0);
    }

    /**
     * recvmmsg into {@code batch}: waits (at most the socket's timeout) for the first datagram, then
     * takes what else is queued without waiting. Returns the number of slots filled, 0 on timeout.
     */
    public int receive(DatagramBatch batch) throws NetlinkException {
        batch.reset(batch.slots());
        int n;
        try {
            n = LibC.recvmmsg(fd.get(), batch.address(), batch.slots(), LibC.MSG_WAITFORONE, 0);
        } catch (LastErrorException e) {
            int errno = e.getErrorCode();
            if (errno == Errno.EAGAIN || errno == Errno.EINTR) {
                return 0;
            }
            throw new NetlinkException("recvmmsg", what, errno, "");
        }
        batch.parseControl(n);
        return n;
    }

    /** True for an AF_INET6 socket. */
    public boolean ipv6() {
        return ipv6;
    }

    /** {@link #send(IoVec, int, int, int, long, long, int)} to an IPv4 address as a 32-bit int. */
    public boolean send(IoVec iov, int from, int count, int segmentSize, int address, int port) throws NetlinkException {
        return send(iov, from, count, segmentSize, 0L, MAPPED | (address & 0xffffffffL), port);
    }

    /**
     * sendmsg of pieces {@code [from, from + count)} of {@code iov} to {@code address:port}, the
     * address as two 64-bit halves of an IPv6 address (an IPv4 address as {@code ::ffff:a.b.c.d},
     * which an AF_INET socket sends to as IPv4; any other IPv6 address on an AF_INET socket fails
     * with EAFNOSUPPORT); with {@code segmentSize > 0} as UDP GSO (the kernel cuts the payload into
     * datagrams of that size, the last may be shorter). Returns false on EAGAIN (send buffer full
     * for the socket's timeout) or ENOBUFS; other errors throw.
     */
    public synchronized boolean send(IoVec iov, int from, int count, int segmentSize, long addressHigh, long addressLow,
            int port) throws NetlinkException {
        putName(send, MSGHDR, addressHigh, addressLow, port, "sendmsg");
        send.putLong(16, iov.address(from));  // msg_iov
        send.putLong(24, count);              // msg_iovlen
        if (segmentSize > 0) {
            int c = MSGHDR + SOCKADDR;
            send.putLong(c, 18);              // cmsg_len = CMSG_LEN(2)
            send.putInt(c + 8, LibC.SOL_UDP);
            send.putInt(c + 12, LibC.UDP_SEGMENT);
            send.putShort(c + 16, (short) segmentSize);
            send.putLong(32, sendAddress + c);
            send.putLong(40, GSO_CONTROL);
        } else {
            send.putLong(32, 0);
            send.putLong(40, 0);
        }
        send.putInt(48, 0);
        while (true) {
            try {
                LibC.sendmsg(fd.get(), sendAddress, 0);
                return true;
            } catch (LastErrorException e) {
                int errno = e.getErrorCode();
                if (errno == Errno.EAGAIN || errno == Errno.ENOBUFS) {
                    return false;
                }
                if (errno != Errno.EINTR) {
                    throw new NetlinkException("sendmsg", what + (segmentSize > 0 ? " gso " + segmentSize : ""), errno, "");
                }
            }
        }
    }

    /**
     * sendmmsg: messages {@code [first, n)} in one system call, all to {@code address:port}; message
     * {@code i} is pieces {@code [from[i], from[i] + count[i])} of {@code iov}, as UDP GSO when
     * {@code segmentSize[i] > 0}. A 64 KB TCP super-packet is cut into more datagrams than one UDP GSO
     * send may carry (65,507 bytes), so it leaves as two or three messages: one call instead of one
     * each, and the peer's reader, woken by the first, finds the rest already queued. At most
     * {@link #MAX_MESSAGES} from {@code first}. Returns how many were sent, from {@code first} on: 0
     * when the send buffer stayed full (EAGAIN, ENOBUFS) for the first of them. Other errors of the
     * first message throw; a later message's error ends the call early (the caller sends the rest
     * again, and then sees it).
     */
    public int sendMany(IoVec iov, int[] from, int[] count, int[] segmentSize, int first, int n,
            int address, int port) throws NetlinkException {
        return sendMany(iov, from, count, segmentSize, first, n, 0L, MAPPED | (address & 0xffffffffL), port);
    }

    /** {@link #sendMany(IoVec, int[], int[], int[], int, int, int, int)} to an address as in {@link #send(IoVec, int, int, int, long, long, int)}. */
    public synchronized int sendMany(IoVec iov, int[] from, int[] count, int[] segmentSize, int first, int n,
            long addressHigh, long addressLow, int port) throws NetlinkException {
        int k = Math.min(MAX_MESSAGES, n - first);
        if (k <= 0) {
            throw new IllegalArgumentException("sendMany: no messages in [" + first + ", " + n + ")");
        }
        putName(many, MANY_NAME, addressHigh, addressLow, port, "sendmmsg");
        for (int j = 0; j < k; j++) {
            int i = first + j;
            int m = j * MMSGHDR;
            many.putLong(m + 16, iov.address(from[i]));  // msg_iov
            many.putLong(m + 24, count[i]);              // msg_iovlen
            if (segmentSize[i] > 0) {
                int c = MANY_CONTROL + j * GSO_CONTROL;
                many.putShort(c + 16, (short) segmentSize[i]);
                many.putLong(m + 32, manyAddress + c);
                many.putLong(m + 40, GSO_CONTROL);
            } else {
                many.putLong(m + 32, 0);
                many.putLong(m + 40, 0);
            }
            many.putInt(m + 48, 0);                      // msg_flags
        }
        while (true) {
            try {
                return LibC.sendmmsg(fd.get(), manyAddress, k, 0);
            } catch (LastErrorException e) {
                int errno = e.getErrorCode();
                if (errno == Errno.EAGAIN || errno == Errno.ENOBUFS) {
                    return 0;
                }
                if (errno != Errno.EINTR) {
                    throw new NetlinkException("sendmmsg", what + (segmentSize[first] > 0 ? " gso " + segmentSize[first] : ""),
                            errno, "");
                }
            }
        }
    }

    /** The destination into the sockaddr at {@code at} (its family already set): sockaddr_in or sockaddr_in6. */
    private void putName(ByteBuffer b, int at, long high, long low, int port, String op) throws NetlinkException {
        b.putShort(at + 2, Short.reverseBytes((short) port));
        if (!ipv6) {
            if (high != 0 || (low & 0xffffffff00000000L) != MAPPED) {
                throw new NetlinkException(op, what + " to an IPv6 address", 97, ""); // EAFNOSUPPORT
            }
            b.putInt(at + 4, Integer.reverseBytes((int) low));
            return;
        }
        b.putInt(at + 4, 0);                         // sin6_flowinfo
        b.putLong(at + 8, Long.reverseBytes(high));  // sin6_addr, network order
        b.putLong(at + 16, Long.reverseBytes(low));
        b.putInt(at + 24, 0);                        // sin6_scope_id
    }

    /** The local port (after binding port 0). */
    public int localPort() throws NetlinkException {
        byte[] sa = new byte[SOCKADDR];
        int[] len = {SOCKADDR};
        try {
            LibC.getsockname(fd.get(), sa, len);
        } catch (LastErrorException e) {
            throw new NetlinkException("getsockname", what, e.getErrorCode(), "");
        }
        return ((sa[2] & 0xff) << 8) | (sa[3] & 0xff);
    }

    @Override
    public void close() {
        fd.close();
    }

    @Override
    public String toString() {
        return what;
    }

    private boolean trySetInt(int level, int name, int value) {
        try {
            LibC.setsockopt(fd.get(), level, name, new int[] {value}, 4);
            return true;
        } catch (LastErrorException e) {
            return false;
        }
    }

    private void setInt(int level, int name, int value, String option) throws NetlinkException {
        try {
            LibC.setsockopt(fd.get(), level, name, new int[] {value}, 4);
        } catch (LastErrorException e) {
            throw new NetlinkException("setsockopt " + option, what, e.getErrorCode(), "");
        }
    }

    /** The FORCE variant (root) lifts the net.core.*mem_max cap; without the privilege the plain one. */
    private void setBuffer(int force, int plain, int bytes) throws NetlinkException {
        if (!trySetInt(LibC.SOL_SOCKET, force, bytes)) {
            setInt(LibC.SOL_SOCKET, plain, bytes, "SO_RCVBUF/SO_SNDBUF");
        }
    }

    private void setTimeout(int option, int millis) throws NetlinkException {
        // struct timeval { long tv_sec; long tv_usec; } as four ints (little-endian 64-bit longs)
        int[] tv = {millis / 1000, 0, (millis % 1000) * 1000, 0};
        try {
            LibC.setsockopt(fd.get(), LibC.SOL_SOCKET, option, tv, 16);
        } catch (LastErrorException e) {
            throw new NetlinkException("setsockopt SO_RCVTIMEO/SO_SNDTIMEO", what, e.getErrorCode(), "");
        }
    }
}
