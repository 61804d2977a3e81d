package org.jflannel.linuxnet.internal;

import com.sun.jna.LastErrorException;
import java.nio.ByteBuffer;
import org.jflannel.linuxnet.NetlinkException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An AF_NETLINK socket (NETLINK_ROUTE, or NETLINK_GENERIC): raw bytes in and out of reused direct buffers. It is bound to
 * the network namespace of the thread that opened it. Not thread-safe; one owner.
 */
public final class NetlinkSocket implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(NetlinkSocket.class);
    private final Fd fd;

    private NetlinkSocket(Fd fd) {
        this.fd = fd;
    }

    /**
     * Opens, enables extended acks (and strict dump checking when asked), sizes the buffers and binds
     * to the given multicast groups (0 = none).
     */
    public static NetlinkSocket open(int groups, int rcvBuf, boolean strict) throws NetlinkException {
        return open(LibC.NETLINK_ROUTE, groups, rcvBuf, strict);
    }

    /** As {@link #open(int, int, boolean)} for another netlink protocol ({@link LibC#NETLINK_GENERIC}). */
    public static NetlinkSocket open(int protocol, int groups, int rcvBuf, boolean strict) throws NetlinkException {
        int raw;
        try {
            raw = LibC.socket(LibC.AF_NETLINK, LibC.SOCK_RAW | LibC.SOCK_CLOEXEC, protocol);
        } catch (LastErrorException e) {
            throw new NetlinkException("socket", "AF_NETLINK protocol " + protocol, e.getErrorCode(), "");
        }
        Fd fd = new Fd(raw, "netlink socket");
        try {
            // Both are conveniences (kernel text in errors; kernel-side dump filtering): kernels before
            // 4.12 / 4.20 lack them, and our errors and Java-side filtering work without them.
            optional(fd, LibC.NETLINK_EXT_ACK, "NETLINK_EXT_ACK");
            if (strict) {
                optional(fd, LibC.NETLINK_GET_STRICT_CHK, "NETLINK_GET_STRICT_CHK");
            }
            if (rcvBuf > 0) {
                // FORCE needs CAP_NET_ADMIN (which we need anyway) and ignores net.core.rmem_max.
                try {
                    setInt(fd, LibC.SOL_SOCKET, LibC.SO_RCVBUFFORCE, rcvBuf, "SO_RCVBUFFORCE");
                } catch (NetlinkException e) {
                    setInt(fd, LibC.SOL_SOCKET, LibC.SO_RCVBUF, rcvBuf, "SO_RCVBUF");
                }
            }
            byte[] sa = new byte[12];
            sa[0] = (byte) LibC.AF_NETLINK;
            sa[8] = (byte) groups;
            sa[9] = (byte) (groups >>> 8);
            sa[10] = (byte) (groups >>> 16);
            sa[11] = (byte) (groups >>> 24);
            try {
                LibC.bind(fd.get(), sa, sa.length);
            } catch (LastErrorException e) {
                throw new NetlinkException("bind", "netlink groups 0x" + Integer.toHexString(groups), e.getErrorCode(), "");
            }
            return new NetlinkSocket(fd);
        } catch (NetlinkException | RuntimeException e) {
            fd.close();
            throw e;
        }
    }

    private static void optional(Fd fd, int option, String what) {
        try {
            setInt(fd, LibC.SOL_NETLINK, option, 1, what);
        } catch (NetlinkException e) {
            LOG.warn("netlink socket option unavailable option={} errno={}", what, e.errnoName());
        }
    }

    private static void setInt(Fd fd, int level, int name, int value, String what) throws NetlinkException {
        try {
            LibC.setsockopt(fd.get(), level, name, new int[] {value}, 4);
        } catch (LastErrorException e) {
            throw new NetlinkException("setsockopt", what, e.getErrorCode(), "");
        }
    }

    /** A receive timeout so a reader thread can notice it was asked to stop. */
    public void setReceiveTimeoutMillis(int millis) throws NetlinkException {
        // struct timeval { long tv_sec; long tv_usec; } as four ints (little-endian 64-bit longs)
        int[] tv = {millis / 1000, 0, (millis % 1000) * 1000, 0};
        try {
            LibC.setsockopt(fd.get(), LibC.SOL_SOCKET, LibC.SO_RCVTIMEO, tv, 16);
        } catch (LastErrorException e) {
            throw new NetlinkException("setsockopt", "SO_RCVTIMEO", e.getErrorCode(), "");
        }
    }

    /** Sends {@code buf} from position to limit as one datagram. */
    public void send(ByteBuffer buf, long address, String what) throws NetlinkException {
        int len = buf.remaining();
        try {
            long n = LibC.send(fd.get(), address + buf.position(), len, 0);
            if (n != len) {
                throw new NetlinkException("send", what, Errno.EMSGSIZE_SHORT, "short send " + n + " of " + len);
            }
        } catch (LastErrorException e) {
            throw new NetlinkException("send", what, e.getErrorCode(), "");
        }
    }

    /**
     * Receives one datagram into {@code buf} (position 0, limit = length). Returns the length, or -1
     * on timeout (EAGAIN) when a receive timeout is set. A datagram larger than the buffer is an error.
     */
    public int receive(ByteBuffer buf, long address, String what) throws NetlinkException {
        while (true) {
            try {
                long n = LibC.recv(fd.get(), address, buf.capacity(), LibC.MSG_TRUNC);
                if (n > buf.capacity()) {
                    throw new NetlinkException("recv", what, Errno.ENOBUFS, "reply of " + n + " bytes exceeds the "
                            + buf.capacity() + "-byte receive buffer");
                }
                buf.clear().limit((int) n);
                return (int) n;
            } catch (LastErrorException e) {
                int errno = e.getErrorCode();
                if (errno == Errno.EINTR) {
                    continue;
                }
                if (errno == Errno.EAGAIN) {
                    return -1;
                }
                throw new NetlinkException("recv", what, errno, "");
            }
        }
    }

    @Override
    public void close() {
        fd.close();
    }
}
