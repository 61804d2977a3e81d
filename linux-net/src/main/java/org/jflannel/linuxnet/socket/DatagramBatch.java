package org.jflannel.linuxnet.socket;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.jflannel.linuxnet.internal.LibC;

/**
 * Receive slots for one {@code recvmmsg} (struct mmsghdr[] with one iovec, sender address and
 * control buffer each, built once): {@link #data()} holds slot {@code i} at {@code i * slotSize()}.
 * After {@link UdpBatchSocket#receive} the first {@code n} slots carry a datagram each: its length,
 * sender, and with UDP GRO the segment size of the train it holds. Not thread-safe.
 */
public final class DatagramBatch {
    static final int MMSGHDR = 64;
    private static final int MSGHDR_NAMELEN = 8;
    private static final int MSGHDR_CONTROLLEN = 40;
    private static final int MSGHDR_FLAGS = 48;
    private static final int MMSG_LEN = 56;
    /** Room for a sockaddr_in6 (28 bytes), rounded to 8; a sockaddr_in takes the first 16. */
    private static final int SOCKADDR = 32;
    private static final int SOCKADDR_IN6 = 28;
    private static final long MAPPED = 0xffffL << 32;
    static final int CONTROL = 64;

    private final int slots;
    private final int slotSize;
    private final ByteBuffer data;
    /** mmsghdr[slots] | iovec[slots] | sockaddr[slots] | control[slots]. */
    private final ByteBuffer meta;
    private final long metaAddress;
    private final int[] segmentSizes;

    public DatagramBatch(int slots, int slotSize) {
        if (slots < 1 || slots > 1024 || slotSize < 1) {
            throw new IllegalArgumentException("datagram batch: expected 1..1024 slots of >= 1 byte, got " + slots + " x " + slotSize);
        }
        this.slots = slots;
        this.slotSize = slotSize;
        this.data = ByteBuffer.allocateDirect(slots * slotSize);
        this.meta = ByteBuffer.allocateDirect(slots * (MMSGHDR + IoVec.IOVEC_BYTES + SOCKADDR + CONTROL))
                .order(ByteOrder.nativeOrder());
        this.metaAddress = LibC.address(meta);
        this.segmentSizes = new int[slots];
        long dataAddress = LibC.address(data);
        for (int i = 0; i < slots; i++) {
            int h = i * MMSGHDR;
            int iov = iovAt(i);
            meta.putLong(iov, dataAddress + (long) i * slotSize);
            meta.putLong(iov + 8, slotSize);
            meta.putLong(h, metaAddress + sockaddrAt(i));   // msg_name
            meta.putLong(h + 16, metaAddress + iov);         // msg_iov
            meta.putLong(h + 24, 1);                         // msg_iovlen
            meta.putLong(h + 32, metaAddress + controlAt(i)); // msg_control
        }
        reset(slots);
    }

    /** The slots' bytes (big-endian, as packets are read): slot {@code i} starts at {@code i * slotSize()}. */
    public ByteBuffer data() {
        return data;
    }

    public int slots() {
        return slots;
    }

    public int slotSize() {
        return slotSize;
    }

    /** Start of slot {@code i} in {@link #data()}. */
    public int offset(int i) {
        return i * slotSize;
    }

    /** Bytes received into slot {@code i}. */
    public int length(int i) {
        return meta.getInt(i * MMSGHDR + MMSG_LEN);
    }

    /** True when the datagram did not fit its slot (MSG_TRUNC). */
    public boolean truncated(int i) {
        return (meta.getInt(i * MMSGHDR + MSGHDR_FLAGS) & LibC.MSG_TRUNC) != 0;
    }

    /**
     * The sender's IPv4 address as a 32-bit int (network order read as big-endian); on an IPv6
     * socket the low 32 bits of its address (the IPv4 one when it is {@code ::ffff:a.b.c.d}).
     */
    public int senderAddress(int i) {
        return isIpv6Name(i) ? (int) senderLow(i) : Integer.reverseBytes(meta.getInt(sockaddrAt(i) + 4));
    }

    /**
     * The high 64 bits of the sender's address as IPv6 (0 for an IPv4 sender: with {@link
     * #senderLow} it is {@code ::ffff:a.b.c.d}, as an IPv6 socket reports IPv4 peers).
     */
    public long senderHigh(int i) {
        return isIpv6Name(i) ? Long.reverseBytes(meta.getLong(sockaddrAt(i) + 8)) : 0L;
    }

    /** The low 64 bits of the sender's address as IPv6 (an IPv4 sender mapped, as in {@link #senderHigh}). */
    public long senderLow(int i) {
        return isIpv6Name(i) ? Long.reverseBytes(meta.getLong(sockaddrAt(i) + 16))
                : MAPPED | (Integer.reverseBytes(meta.getInt(sockaddrAt(i) + 4)) & 0xffffffffL);
    }

    private boolean isIpv6Name(int i) {
        return meta.getShort(sockaddrAt(i)) == LibC.AF_INET6;
    }

    public int senderPort(int i) {
        return Short.reverseBytes(meta.getShort(sockaddrAt(i) + 2)) & 0xffff; // same place in sockaddr_in and _in6
    }

    /**
     * With UDP GRO: the size of each datagram of the train in slot {@code i} (all but the last have
     * it); the whole length when the slot holds a single datagram.
     */
    public int segmentSize(int i) {
        return segmentSizes[i] > 0 ? segmentSizes[i] : length(i);
    }

    long address() {
        return metaAddress;
    }

    /**
     * Slot {@code i} as {@code recvmmsg} would have left it, for replaying a receive (the fuzz targets):
     * the datagram's first {@link #slotSize()} bytes (MSG_TRUNC when it is longer, as the kernel reports
     * it), the sender's sockaddr bytes as the kernel writes them (at most 28) and the control messages'
     * (at most {@value #CONTROL}). Then {@link #replayed} as after the receive.
     */
    public void replay(int i, byte[] datagram, int off, int len, byte[] sockaddr, byte[] control) {
        int h = i * MMSGHDR;
        int n = Math.min(len, slotSize);
        data.put(offset(i), datagram, off, n);
        meta.putInt(h + MMSG_LEN, n);
        meta.putInt(h + MSGHDR_FLAGS, len > slotSize ? LibC.MSG_TRUNC : 0);
        int name = Math.min(sockaddr.length, SOCKADDR_IN6);
        meta.put(sockaddrAt(i), sockaddr, 0, name);
        meta.putInt(h + MSGHDR_NAMELEN, name);
        int ctl = Math.min(control.length, CONTROL);
        meta.put(controlAt(i), control, 0, ctl);
        meta.putLong(h + MSGHDR_CONTROLLEN, ctl);
    }

    /** After {@link #replay} of slots {@code 0..n-1}: what a receive does after the kernel wrote them. */
    public void replayed(int n) {
        parseControl(n);
    }

    /** Before a receive: the kernel shrinks namelen and controllen to what it wrote. */
    void reset(int n) {
        for (int i = 0; i < n; i++) {
            int h = i * MMSGHDR;
            meta.putInt(h + MSGHDR_NAMELEN, SOCKADDR_IN6);
            meta.putLong(h + MSGHDR_CONTROLLEN, CONTROL);
            meta.putInt(h + MSGHDR_FLAGS, 0);
        }
    }

    /** After a receive of {@code n} datagrams: finds each slot's UDP_GRO segment size in its control messages. */
    void parseControl(int n) {
        for (int i = 0; i < n; i++) {
            segmentSizes[i] = 0;
            long len = meta.getLong(i * MMSGHDR + MSGHDR_CONTROLLEN);
            int base = controlAt(i);
            int at = 0;
            while (at + 16 <= len) { // struct cmsghdr { size_t len; int level; int type; } data
                long cmsgLen = meta.getLong(base + at);
                if (cmsgLen < 16 || cmsgLen > len - at) {
                    break; // odd or overlong (a step of (int) 2^62 = 0 looped here forever: fuzzing found it)
                }
                if (meta.getInt(base + at + 8) == LibC.SOL_UDP && meta.getInt(base + at + 12) == LibC.UDP_GRO && cmsgLen >= 20) {
                    segmentSizes[i] = meta.getInt(base + at + 16);
                }
                at += (int) ((cmsgLen + 7) & ~7L);
            }
        }
    }

    private int iovAt(int i) {
        return slots * MMSGHDR + i * IoVec.IOVEC_BYTES;
    }

    private int sockaddrAt(int i) {
        return slots * (MMSGHDR + IoVec.IOVEC_BYTES) + i * SOCKADDR;
    }

    private int controlAt(int i) {
        return slots * (MMSGHDR + IoVec.IOVEC_BYTES + SOCKADDR) + i * CONTROL;
    }
}
