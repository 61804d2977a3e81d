package org.jflannel.linuxnet.tun;

import com.sun.jna.LastErrorException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Set;
import org.jflannel.linuxnet.Names;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.internal.Errno;
import org.jflannel.linuxnet.internal.Fd;
import org.jflannel.linuxnet.internal.LibC;
import org.jflannel.linuxnet.internal.LibCQuiet;
import org.jflannel.linuxnet.netlink.IpPrefix;
import org.jflannel.linuxnet.netlink.Link;
import org.jflannel.linuxnet.netlink.Route;
import org.jflannel.linuxnet.netlink.RtNetlink;
import org.jflannel.linuxnet.socket.IoVec;

/**
 * A TUN device opened through /dev/net/tun. The device lives as long as the descriptor (unless made
 * persistent elsewhere), so {@link #close()} (exactly once) also removes it. It belongs to the
 * network namespace of the thread that opened it. Reads and writes use direct buffers; a read
 * blocks until a packet arrives, unless {@link #setNonBlocking()} was called. One thread reads
 * (and polls); writes may come from others.
 */
public final class TunDevice implements AutoCloseable {
    public enum Flag { TUN, NO_PI, VNET_HDR, MULTI_QUEUE }

    public static final int TUN_F_CSUM = 0x01;
    public static final int TUN_F_TSO4 = 0x02;
    public static final int TUN_F_TSO6 = 0x04;
    public static final int TUN_F_TSO_ECN = 0x08;
    public static final int TUN_F_UFO = 0x10;
    public static final int TUN_F_USO4 = 0x20;
    public static final int TUN_F_USO6 = 0x40;

    static final long TUNSETIFF = 0x400454caL;
    static final long TUNSETOFFLOAD = 0x400454d0L;
    static final int IFF_TUN = 0x0001;
    static final int IFF_NO_PI = 0x1000;
    static final int IFF_VNET_HDR = 0x4000;
    static final int IFF_MULTI_QUEUE = 0x0100;
    private static final int IFREQ_LEN = 40;

    private final Fd fd;
    private final String name;
    private final ByteBuffer pollFd = ByteBuffer.allocateDirect(8).order(java.nio.ByteOrder.nativeOrder());
    private final long pollFdAddress = LibC.address(pollFd);
    private volatile Cached readCache;
    private volatile Cached writeCache;

    /** A buffer and its native address; one per direction so a reader and a writer thread never mix them. */
    private record Cached(ByteBuffer buffer, long address) {
    }

    private TunDevice(Fd fd, String name) {
        this.fd = fd;
        this.name = name;
    }

    /** Opens (creating when needed) a TUN device; {@code namePattern} may contain {@code %d}. */
    public static TunDevice open(String namePattern, Set<Flag> flags) throws NetlinkException {
        Names.checkIfName("tun name", namePattern);
        if (!flags.contains(Flag.TUN)) {
            throw new IllegalArgumentException("tun " + namePattern + ": flags must include TUN (TAP is not supported)");
        }
        byte[] ifr = ifreq(namePattern, flagBits(flags));
        Fd fd;
        try {
            fd = new Fd(LibC.open("/dev/net/tun", LibC.O_RDWR | LibC.O_CLOEXEC, 0), "tun " + namePattern);
        } catch (LastErrorException e) {
            throw new NetlinkException("open", "/dev/net/tun", e.getErrorCode(), "");
        }
        try {
            LibC.ioctl(fd.get(), TUNSETIFF, ifr);
        } catch (LastErrorException e) {
            fd.close();
            throw new NetlinkException("ioctl TUNSETIFF", namePattern, e.getErrorCode(), "");
        }
        return new TunDevice(fd, nameOf(ifr));
    }

    static int flagBits(Set<Flag> flags) {
        int bits = 0;
        for (Flag f : flags) {
            bits |= switch (f) {
                case TUN -> IFF_TUN;
                case NO_PI -> IFF_NO_PI;
                case VNET_HDR -> IFF_VNET_HDR;
                case MULTI_QUEUE -> IFF_MULTI_QUEUE;
            };
        }
        return bits;
    }

    /** struct ifreq: ifr_name[16] then ifr_flags (short, host order) in the 24-byte union. */
    static byte[] ifreq(String name, int flags) {
        byte[] ifr = new byte[IFREQ_LEN];
        byte[] n = name.getBytes(StandardCharsets.US_ASCII);
        System.arraycopy(n, 0, ifr, 0, n.length);
        ifr[16] = (byte) flags;
        ifr[17] = (byte) (flags >>> 8);
        return ifr;
    }

    static String nameOf(byte[] ifr) {
        int n = 0;
        while (n < 16 && ifr[n] != 0) {
            n++;
        }
        return new String(ifr, 0, n, StandardCharsets.US_ASCII);
    }

    public String name() {
        return name;
    }

    /**
     * The layer-3 overlay device's set-up shared by the udp and wireguard backends (upstream's for
     * both): MTU, {@code own} as the device's address (the lease's network address as /32), up, then
     * the route to the whole flannel {@code network} through this device. Replace, not add: the same
     * effect as upstream's add-and-ignore-EEXIST, and a stale route to another device is fixed.
     */
    public void addressAndRoute(IpPrefix own, IpPrefix network, int mtu) throws NetlinkException {
        try (RtNetlink nl = RtNetlink.open()) {
            Link link = nl.link(name()).orElseThrow(() ->
                    new NetlinkException("RTM_GETLINK", name(), 19, "tun device vanished after open"));
            int index = link.index();
            nl.setMtu(index, mtu);
            nl.replaceAddress(index, own);
            nl.setUp(index);
            nl.replaceRoute(Route.device(network, index));
        }
    }

    public int fd() {
        return fd.get();
    }

    /** TUNSETOFFLOAD with TUN_F_* bits (needs VNET_HDR for anything but 0). */
    public void setOffload(int tunOffloadFlags) throws NetlinkException {
        try {
            LibC.ioctl(fd.get(), TUNSETOFFLOAD, tunOffloadFlags & 0xffffffffL);
        } catch (LastErrorException e) {
            throw new NetlinkException("ioctl TUNSETOFFLOAD", name + " 0x" + Integer.toHexString(tunOffloadFlags),
                    e.getErrorCode(), "");
        }
    }

    /**
     * Makes reads return at once when no packet is queued ({@link #read} -1, {@link #tryRead} -1): a
     * reader that reads first and polls only when the queue is empty makes one system call per
     * packet while packets keep coming, instead of a poll and a read.
     */
    public void setNonBlocking() throws NetlinkException {
        try {
            int flags = LibC.fcntl(fd.get(), LibC.F_GETFL, 0);
            LibC.fcntl(fd.get(), LibC.F_SETFL, flags | LibC.O_NONBLOCK);
        } catch (LastErrorException e) {
            throw new NetlinkException("fcntl F_SETFL O_NONBLOCK", name, e.getErrorCode(), "");
        }
    }

    /**
     * Waits up to {@code timeoutMillis} for a packet to read (poll POLLIN); lets a reader bound its
     * wait and notice a stop request, since a blocked read() is not woken by close(). Reader thread only.
     */
    public boolean awaitReadable(int timeoutMillis) throws NetlinkException {
        pollFd.putInt(0, fd.get()).putInt(4, LibC.POLLIN); // events; revents (the high half) zeroed
        try {
            return LibC.poll(pollFdAddress, 1, timeoutMillis) > 0 && ((pollFd.getShort(6) & LibC.POLLIN) != 0);
        } catch (LastErrorException e) {
            if (e.getErrorCode() == Errno.EINTR) {
                return false;
            }
            throw new NetlinkException("poll", name, e.getErrorCode(), "");
        }
    }

    /**
     * Reads one packet into {@code direct} at its position; advances the position; returns the
     * length, or -1 when the device is non-blocking and no packet is queued.
     */
    public int read(ByteBuffer direct) throws NetlinkException {
        long addr = readAddress(direct);
        while (true) {
            try {
                int n = (int) LibC.read(fd.get(), addr + direct.position(), direct.remaining());
                direct.position(direct.position() + n);
                return n;
            } catch (LastErrorException e) {
                if (e.getErrorCode() == Errno.EAGAIN) {
                    return -1;
                }
                if (e.getErrorCode() != Errno.EINTR) {
                    throw new NetlinkException("read", name, e.getErrorCode(), "");
                }
            }
        }
    }

    /**
     * As {@link #read}, but a failure raises nothing: -1 when no packet was read, whatever the
     * reason (an empty queue of a non-blocking device, mostly); {@link #read} then tells an error.
     */
    public int tryRead(ByteBuffer direct) {
        long addr = readAddress(direct);
        int n = (int) LibCQuiet.read(fd.get(), addr + direct.position(), direct.remaining());
        if (n >= 0) {
            direct.position(direct.position() + n);
        }
        return n;
    }

    private long readAddress(ByteBuffer direct) {
        Cached c = readCache;
        if (c == null || c.buffer() != direct) {
            readCache = c = new Cached(direct, LibC.address(direct));
        }
        return c.address();
    }

    /** Writes the bytes between position and limit as one packet; advances the position. */
    public int write(ByteBuffer direct) throws NetlinkException {
        Cached c = writeCache;
        if (c == null || c.buffer() != direct) {
            writeCache = c = new Cached(direct, LibC.address(direct));
        }
        long addr = c.address();
        while (true) {
            try {
                int n = (int) LibC.write(fd.get(), addr + direct.position(), direct.remaining());
                direct.position(direct.position() + n);
                return n;
            } catch (LastErrorException e) {
                if (e.getErrorCode() != Errno.EINTR) {
                    throw new NetlinkException("write", name, e.getErrorCode(), "");
                }
            }
        }
    }

    /** Writes all pieces of {@code iov} as one packet (writev); returns the bytes written. */
    public long writev(IoVec iov) throws NetlinkException {
        while (true) {
            try {
                return LibC.writev(fd.get(), iov.address(0), iov.count());
            } catch (LastErrorException e) {
                if (e.getErrorCode() != Errno.EINTR) {
                    throw new NetlinkException("writev", name, e.getErrorCode(), "");
                }
            }
        }
    }

    /** Closes the descriptor exactly once (the device disappears with it unless persistent). */
    @Override
    public void close() {
        fd.close();
    }
}
