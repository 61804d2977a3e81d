package org.jflannel.linuxnet.internal;

import com.sun.jna.LastErrorException;
import com.sun.jna.Native;
import com.sun.jna.NativeLibrary;
import com.sun.jna.Pointer;
import java.nio.ByteBuffer;

/**
 * Raw libc bindings (JNA direct mapping: no reflection per call, so a netlink round trip costs two
 * cheap native calls). Failures raise {@link LastErrorException} carrying errno; {@link Fd} and
 * {@link NetlinkSocket} turn those into NetlinkException.
 */
public final class LibC {
    public static final int AF_UNIX = 1;
    public static final int AF_INET = 2;
    public static final int AF_INET6 = 10;
    public static final int IPPROTO_IPV6 = 41;
    public static final int IPV6_V6ONLY = 26;
    public static final int IPPROTO_IP = 0;
    public static final int IPPROTO_ICMP = 1;
    public static final int IP_MTU_DISCOVER = 10;
    public static final int IP_PMTUDISC_DO = 2;
    public static final int SOL_RAW = 255;
    public static final int ICMP_FILTER = 1;
    public static final int AF_NETLINK = 16;
    public static final int SOCK_DGRAM = 2;
    public static final int SOCK_RAW = 3;
    public static final int SOCK_CLOEXEC = 0x80000;
    public static final int NETLINK_ROUTE = 0;
    public static final int NETLINK_XFRM = 6;
    public static final int NETLINK_GENERIC = 16;
    public static final int SOL_SOCKET = 1;
    public static final int SO_SNDBUF = 7;
    public static final int SO_RCVBUF = 8;
    public static final int SO_RCVTIMEO = 20;
    /** SO_TIMESTAMPNS(_OLD): a struct timespec (CLOCK_REALTIME) control message per received packet. */
    public static final int SO_TIMESTAMPNS = 35;
    public static final int SO_SNDBUFFORCE = 32;
    public static final int SO_RCVBUFFORCE = 33;
    public static final int SOL_NETLINK = 270;
    public static final int NETLINK_ADD_MEMBERSHIP = 1;
    public static final int NETLINK_EXT_ACK = 11;
    public static final int NETLINK_GET_STRICT_CHK = 12;
    public static final int MSG_TRUNC = 0x20;
    public static final int MSG_DONTWAIT = 0x40;
    public static final int MSG_WAITFORONE = 0x10000;
    public static final int SO_REUSEPORT = 15;
    public static final int SO_SNDTIMEO = 21;
    public static final int SOL_UDP = 17;
    public static final int UDP_SEGMENT = 103;
    public static final int UDP_GRO = 104;

    public static final int O_RDONLY = 0;
    public static final int O_RDWR = 2;
    public static final int O_CREAT = 0x40;
    public static final int O_EXCL = 0x80;
    public static final int O_CLOEXEC = 0x80000;

    public static final int POLLIN = 0x1;
    public static final int F_GETFL = 3;
    public static final int F_SETFL = 4;
    public static final int O_NONBLOCK = 0x800;

    public static final int CLONE_NEWNET = 0x40000000;
    public static final long MS_BIND = 4096;
    public static final long MS_REC = 16384;
    public static final long MS_SHARED = 1L << 20;
    public static final int MNT_DETACH = 2;

    static {
        Native.register(LibC.class, NativeLibrary.getInstance("c"));
    }

    private LibC() {
    }

    /** The native address of a direct buffer (buffers are reused, so this is computed once per buffer). */
    public static long address(ByteBuffer direct) {
        if (!direct.isDirect()) {
            throw new IllegalArgumentException("buffer must be direct");
        }
        return Pointer.nativeValue(com.sun.jna.Native.getDirectBufferPointer(direct));
    }

    public static native int socket(int domain, int type, int protocol) throws LastErrorException;

    public static native int bind(int fd, byte[] addr, int addrLen) throws LastErrorException;

    public static native int getsockname(int fd, byte[] addr, int[] addrLen) throws LastErrorException;

    public static native int setsockopt(int fd, int level, int name, int[] value, int len) throws LastErrorException;

    public static native int getsockopt(int fd, int level, int name, int[] value, int[] len) throws LastErrorException;

    public static native long send(int fd, long buf, long len, int flags) throws LastErrorException;

    public static native long recv(int fd, long buf, long len, int flags) throws LastErrorException;

    public static native long sendto(int fd, byte[] buf, long len, int flags, byte[] addr, int addrLen)
            throws LastErrorException;

    /** sendto with the packet and the address in native memory (direct buffers): no array copies per call. */
    public static native long sendto(int fd, long buf, long len, int flags, long addr, int addrLen)
            throws LastErrorException;

    public static native long read(int fd, long buf, long len) throws LastErrorException;

    /** struct mmsghdr[vlen] at {@code msgvec}; {@code timeout} a struct timespec pointer or 0. */
    public static native int recvmmsg(int fd, long msgvec, int vlen, int flags, long timeout) throws LastErrorException;

    /** struct msghdr at {@code msg}. */
    public static native long sendmsg(int fd, long msg, int flags) throws LastErrorException;

    /** sendmmsg(2): {@code msgvec} points to {@code vlen} struct mmsghdr in native memory; the number of messages sent. */
    public static native int sendmmsg(int fd, long msgvec, int vlen, int flags) throws LastErrorException;

    /** struct iovec[iovcnt] at {@code iov}. */
    public static native long writev(int fd, long iov, int iovcnt) throws LastErrorException;

    /** The calling thread when {@code pid} is 0; {@code mask} a cpu_set_t of {@code size} bytes. */
    public static native int sched_setaffinity(int pid, long size, long[] mask) throws LastErrorException;

    public static native long write(int fd, long buf, long len) throws LastErrorException;

    public static native int open(String path, int flags, int mode) throws LastErrorException;

    public static native int close(int fd) throws LastErrorException;

    public static native int ioctl(int fd, long request, byte[] arg) throws LastErrorException;

    public static native int ioctl(int fd, long request, long arg) throws LastErrorException;

    /** struct pollfd as two ints: {fd, events | revents << 16}. */
    public static native int poll(int[] fds, long nfds, int timeoutMillis) throws LastErrorException;

    /** poll with the pollfd array in native memory: a hot loop's poll without JNA copying an int[] (malloc, free) per call. */
    public static native int poll(long fds, long nfds, int timeoutMillis) throws LastErrorException;

    public static native int fcntl(int fd, int cmd, long arg) throws LastErrorException;

    public static final int F_SETFD = 2;
    public static final int FD_CLOEXEC = 1;

    /** argv and envp: {@link com.sun.jna.StringArray}s (NULL-terminated). Returns only on failure. */
    public static native int execve(String path, Pointer argv, Pointer envp) throws LastErrorException;

    public static native int setns(int fd, int nstype) throws LastErrorException;

    public static native int unshare(int flags) throws LastErrorException;

    public static native int mount(String source, String target, String fsType, long flags, String data)
            throws LastErrorException;

    public static native int umount2(String target, int flags) throws LastErrorException;

    /**
     * syscall(2) with three arguments, for bpf(2), which glibc does not wrap. Direct mapping passes
     * the arguments in registers as the variadic call would on x86_64 and aarch64.
     */
    public static native long syscall(long number, long a1, long a2, long a3) throws LastErrorException;
}
