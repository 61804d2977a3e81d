package org.jflannel.linuxnet.socket;

import com.sun.jna.LastErrorException;
import java.net.Inet4Address;
import java.nio.ByteBuffer;
import java.util.Optional;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.internal.Errno;
import org.jflannel.linuxnet.internal.Fd;
import org.jflannel.linuxnet.internal.LibC;

/**
 * A raw ICMPv4 socket for echo probes (what {@code ping} does, without a process per probe). It
 * belongs to the network namespace of the thread that opens it. Every packet leaves with DF set
 * ({@code IP_MTU_DISCOVER = IP_PMTUDISC_DO}): a probe larger than the path MTU the kernel knows fails
 * at once with EMSGSIZE instead of being fragmented, and one lost on the way is not rescued by
 * fragmentation, so an MTU black hole shows as one. The kernel's ICMP filter passes only echo
 * replies, destination-unreachable and time-exceeded (a raw socket would otherwise also see every
 * echo request other nodes send us). Needs CAP_NET_RAW.
 *
 * <p>Not thread-safe: one owner thread sends and receives.
 */
public final class IcmpSocket implements AutoCloseable {
    /** errno of a probe larger than the path MTU the kernel knows (DF is set). */
    public static final int EMSGSIZE = 90;
    /**
     * Receive buffer: a reader that takes replies once per tick (the prober) must hold a tick's worth,
     * ~80 replies at 2,000 peers with the full-size ones taking ~2-4 KB of buffer each. Forced past
     * {@code net.core.rmem_max} (212,992 by default) with CAP_NET_ADMIN, else as much as that allows.
     */
    private static final int RCVBUF = 2 << 20;
    /** Types the kernel should drop before they reach us: all but 0, 3 and 11. */
    private static final int FILTER = ~((1 << IcmpCodec.TYPE_ECHO_REPLY) | (1 << IcmpCodec.TYPE_UNREACHABLE)
            | (1 << IcmpCodec.TYPE_TIME_EXCEEDED));

    private final Fd fd;
    private final ByteBuffer rx = ByteBuffer.allocateDirect(65536);
    private final long rxAddress = LibC.address(rx);
    private final ByteBuffer tx = ByteBuffer.allocateDirect(65536 - IcmpCodec.IP_HEADER);
    private final long txAddress = LibC.address(tx);
    private final ByteBuffer sockaddr = ByteBuffer.allocateDirect(16);
    private final long sockaddrAddress = LibC.address(sockaddr);
    private final PayloadSums payloadSums = new PayloadSums();
    private final int[] pollFd = new int[2];
    private int rcvTimeoutMillis;

    private IcmpSocket(Fd fd) {
        this.fd = fd;
        IcmpCodec.fillPayloadPattern(tx);
    }

    /** Opens the socket in the calling thread's network namespace. */
    public static IcmpSocket open() throws NetlinkException {
        Fd fd;
        try {
            fd = new Fd(LibC.socket(LibC.AF_INET, LibC.SOCK_RAW | LibC.SOCK_CLOEXEC, LibC.IPPROTO_ICMP), "icmp socket");
        } catch (LastErrorException e) {
            throw new NetlinkException("socket", "AF_INET SOCK_RAW IPPROTO_ICMP", e.getErrorCode(), "");
        }
        try {
            set(fd, LibC.IPPROTO_IP, LibC.IP_MTU_DISCOVER, LibC.IP_PMTUDISC_DO, "IP_MTU_DISCOVER");
            set(fd, LibC.SOL_RAW, LibC.ICMP_FILTER, FILTER, "ICMP_FILTER");
            try {
                set(fd, LibC.SOL_SOCKET, LibC.SO_RCVBUFFORCE, RCVBUF, "SO_RCVBUFFORCE");
            } catch (NetlinkException e) { // no CAP_NET_ADMIN: capped at rmem_max
                set(fd, LibC.SOL_SOCKET, LibC.SO_RCVBUF, RCVBUF, "SO_RCVBUF");
            }
            set(fd, LibC.SOL_SOCKET, LibC.SO_TIMESTAMPNS, 1, "SO_TIMESTAMPNS");
        } catch (NetlinkException e) {
            fd.close();
            throw e;
        }
        return new IcmpSocket(fd);
    }

    private static void set(Fd fd, int level, int name, int value, String what) throws NetlinkException {
        try {
            LibC.setsockopt(fd.get(), level, name, new int[] {value}, 4);
        } catch (LastErrorException e) {
            throw new NetlinkException("setsockopt", "icmp socket " + what, e.getErrorCode(), "");
        }
    }

    /**
     * Sends one echo request whose IP packet is {@code ipLength} bytes (28 for an empty one; the
     * overlay MTU for a full-size one).
     *
     * @throws NetlinkException EMSGSIZE when it exceeds the MTU the kernel knows for the path,
     *                          ENETUNREACH/EHOSTUNREACH without a route, ...
     */
    public void sendEcho(Inet4Address dst, int id, int seq, int ipLength) throws NetlinkException {
        sendEcho(address(dst), id, seq, ipLength);
    }

    /** An IPv4 address as the big-endian int {@link #sendEcho(int, int, int, int)} and {@link IcmpBatch} use. */
    public static int address(Inet4Address a) {
        byte[] b = a.getAddress();
        return (b[0] & 0xff) << 24 | (b[1] & 0xff) << 16 | (b[2] & 0xff) << 8 | (b[3] & 0xff);
    }

    /** As {@link #sendEcho(Inet4Address, int, int, int)} to {@code dst} as an int ({@link #address}): allocates nothing. */
    public void sendEcho(int dst, int id, int seq, int ipLength) throws NetlinkException {
        int len = IcmpCodec.writeEchoRequest(tx, id, seq, ipLength, payloadSums.of(ipLength - IcmpCodec.IP_HEADER));
        send(dst, len, " len ", ipLength);
    }

    /** sendto(2) of the {@code len} bytes in {@code tx} to {@code dst}, again on EINTR; {@code what} and {@code n} name it in an error. */
    private void send(int dst, int len, String what, int n) throws NetlinkException {
        IcmpCodec.sockaddr(sockaddr, dst);
        while (true) {
            try {
                LibC.sendto(fd.get(), txAddress, len, LibC.MSG_DONTWAIT, sockaddrAddress, 16);
                return;
            } catch (LastErrorException e) {
                if (e.getErrorCode() != Errno.EINTR) {
                    throw new NetlinkException("sendto", "icmp echo " + IcmpCodec.ip(dst).getHostAddress() + what + n,
                            e.getErrorCode(), "");
                }
            }
        }
    }

    /**
     * Sends one echo request whose payload is {@code payload} (at most 1,024 bytes) instead of the
     * fixed pattern: a probe whose answer must carry something only its receiver saw (a nonce), as the
     * echo reply returns the request's payload. Allocates nothing beyond the caller's array.
     */
    public void sendEcho(int dst, int id, int seq, byte[] payload) throws NetlinkException {
        if (payload.length > 1024) {
            throw new IllegalArgumentException("icmp echo payload: at most 1024 bytes, got " + payload.length);
        }
        int len = IcmpCodec.ICMP_HEADER + payload.length;
        tx.put(IcmpCodec.ICMP_HEADER, payload);
        try {
            IcmpCodec.writeEchoRequest(tx, id, seq, len + IcmpCodec.IP_HEADER,
                    IcmpCodec.payloadSum(tx, IcmpCodec.ICMP_HEADER, len));
            send(dst, len, " payload ", payload.length);
        } finally {
            for (int i = IcmpCodec.ICMP_HEADER; i < len; i++) { // the pattern back, which the other sends' cached sums assume
                tx.put(i, (byte) i);
            }
        }
    }

    /** Waits up to {@code timeoutMillis} for something to read; false on timeout or a signal. */
    public boolean awaitReadable(int timeoutMillis) throws NetlinkException {
        int[] pfd = pollFd;
        pfd[0] = fd.get();
        pfd[1] = LibC.POLLIN;
        try {
            return LibC.poll(pfd, 1, timeoutMillis) > 0 && ((pfd[1] >>> 16) & LibC.POLLIN) != 0;
        } catch (LastErrorException e) {
            if (e.getErrorCode() == Errno.EINTR) {
                return false;
            }
            throw new NetlinkException("poll", "icmp socket", e.getErrorCode(), "");
        }
    }

    /**
     * Waits up to {@code timeoutMillis} (1..10,000) for one message and returns it; empty when none
     * came. One blocking {@code recv} (SO_RCVTIMEO) per message: at thousands of peers the probe loop
     * calls this hundreds of times a second, so it costs one system call, not a poll and a read.
     * Packets that are not about an echo request (or are truncated) are skipped.
     */
    public Optional<IcmpMessage> receive(int timeoutMillis) throws NetlinkException {
        if (timeoutMillis < 1 || timeoutMillis > 10_000) {
            throw new IllegalArgumentException("icmp receive timeout must be 1..10000 ms, got " + timeoutMillis);
        }
        if (timeoutMillis != rcvTimeoutMillis) {
            int[] timeval = {timeoutMillis / 1000, 0, (timeoutMillis % 1000) * 1000, 0}; // struct timeval, 64-bit LE
            try {
                LibC.setsockopt(fd.get(), LibC.SOL_SOCKET, LibC.SO_RCVTIMEO, timeval, 16);
            } catch (LastErrorException e) {
                throw new NetlinkException("setsockopt", "icmp socket SO_RCVTIMEO", e.getErrorCode(), "");
            }
            rcvTimeoutMillis = timeoutMillis;
        }
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000L;
        while (true) {
            long n;
            try {
                n = LibC.recv(fd.get(), rxAddress, rx.capacity(), 0);
            } catch (LastErrorException e) {
                if (e.getErrorCode() == Errno.EAGAIN) {
                    return Optional.empty();
                }
                if (e.getErrorCode() == Errno.EINTR) {
                    continue;
                }
                throw new NetlinkException("recv", "icmp socket", e.getErrorCode(), "");
            }
            rx.clear().limit((int) n);
            Optional<IcmpMessage> m = IcmpCodec.parse(rx);
            if (m.isPresent() || System.nanoTime() - deadline >= 0) {
                return m;
            }
        }
    }

    /**
     * Sends the batch's echo requests with {@code sendmmsg} (one system call for all, unless one
     * fails) and marks each one's fate in {@link IcmpEchoBatch#errno}: 0 when it left, else the errno
     * ({@link #EMSGSIZE} above the path MTU the kernel knows, ENETUNREACH, EAGAIN when the send
     * buffer is full, ...). The kernel stops a sendmmsg at the first failing message and returns how
     * many left before it; the next call starts at that message, which then fails alone and yields
     * its errno.
     */
    public void send(IcmpEchoBatch batch) throws NetlinkException {
        int i = 0;
        int size = batch.size();
        while (i < size) {
            try {
                int n = LibC.sendmmsg(fd.get(), batch.address(i), size - i, LibC.MSG_DONTWAIT);
                i += Math.max(n, 1);
            } catch (LastErrorException e) {
                if (e.getErrorCode() == Errno.EINTR) {
                    continue;
                }
                if (e.getErrorCode() == Errno.EBADF) {
                    throw new NetlinkException("sendmmsg", "icmp socket", e.getErrorCode(), "");
                }
                batch.failed(i, e.getErrorCode());
                i++;
            }
        }
    }

    /**
     * Takes what is queued, without waiting, into {@code batch} (up to its size) and returns how
     * many packets it holds; 0 when nothing was queued. Meant to be called once per tick by a reader
     * that does not wake per packet: each packet keeps the kernel's receive time
     * ({@link IcmpBatch#kernelTimestampNanos}). A zero-timeout poll comes first, so an empty queue
     * costs one cheap system call and no EAGAIN (JNA raises errno as an exception, which costs more
     * than the call). Call again while it returns a full batch.
     */
    public int receive(IcmpBatch batch) throws NetlinkException {
        if (!awaitReadable(0)) {
            return 0;
        }
        batch.reset();
        int n;
        while (true) {
            try {
                n = LibC.recvmmsg(fd.get(), batch.address(), batch.slots(), LibC.MSG_DONTWAIT, 0);
                break;
            } catch (LastErrorException e) {
                if (e.getErrorCode() == Errno.EAGAIN) {
                    return 0;
                }
                if (e.getErrorCode() != Errno.EINTR) {
                    throw new NetlinkException("recvmmsg", "icmp socket", e.getErrorCode(), "");
                }
            }
        }
        batch.decode(n);
        return n;
    }

    @Override
    public void close() {
        fd.close();
    }
}
