package org.jflannel.linuxnet.socket;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.jflannel.linuxnet.internal.LibC;

/**
 * Echo requests to send with one {@code sendmmsg} ({@link IcmpSocket#send(IcmpEchoBatch)}): per
 * request an 8-byte ICMP header and the destination, built in native memory once per slot; the
 * payload is one shared pattern buffer (the same bytes as {@link IcmpSocket#sendEcho}), gathered by
 * the kernel, so a 1,400-byte probe costs Java an 8-byte write. After the send, {@link #errno(int)}
 * says which requests the kernel refused. Not thread-safe.
 */
public final class IcmpEchoBatch {
    private static final int MMSGHDR = 64;
    private static final int SOCKADDR = 16;
    private static final int IOVECS = 2 * 16;
    /** mmsghdr | sockaddr_in | iovec[2] | ICMP header, rounded up. */
    static final int SLOT = 128;
    private static final int HEADER_AT = MMSGHDR + SOCKADDR + IOVECS;
    /** The payload pattern from ICMP offset 8 on: byte {@code i} of the message is {@code (byte) i}. */
    private static final ByteBuffer PATTERN;
    private static final long PATTERN_ADDRESS;

    static {
        ByteBuffer b = ByteBuffer.allocateDirect(65536);
        for (int i = 0; i < b.capacity(); i++) {
            b.put(i, (byte) (i + IcmpCodec.ICMP_HEADER));
        }
        PATTERN = b;
        PATTERN_ADDRESS = LibC.address(b);
    }

    private final int slots;
    private final ByteBuffer mem;
    private final long address;
    private final int[] errnos;
    private final PayloadSums payloadSums = new PayloadSums();
    private int size;

    public IcmpEchoBatch(int slots) {
        if (slots < 1 || slots > 1024) {
            throw new IllegalArgumentException("icmp echo batch: expected 1..1024 slots, got " + slots);
        }
        this.slots = slots;
        this.mem = ByteBuffer.allocateDirect(slots * SLOT).order(ByteOrder.nativeOrder());
        this.address = LibC.address(mem);
        this.errnos = new int[slots];
        for (int i = 0; i < slots; i++) {
            int at = i * SLOT;
            long slot = address + at;
            mem.putLong(at, slot + MMSGHDR);                // msg_name
            mem.putInt(at + 8, SOCKADDR);                   // msg_namelen
            mem.putLong(at + 16, slot + MMSGHDR + SOCKADDR); // msg_iov
            mem.putLong(at + 24, 2);                        // msg_iovlen
            int iov = at + MMSGHDR + SOCKADDR;
            mem.putLong(iov, slot + HEADER_AT).putLong(iov + 8, IcmpCodec.ICMP_HEADER);
            mem.putLong(iov + 16, PATTERN_ADDRESS);
            mem.putShort(at + MMSGHDR, (short) LibC.AF_INET); // sin_family (host order), sin_port 0
        }
    }

    /**
     * Adds an echo request whose IP packet is {@code ipLength} bytes (28..65535) to {@code dst} (a
     * big-endian int, {@link IcmpSocket#address}); false, and nothing added, when the batch is full.
     */
    public boolean add(int dst, int id, int seq, int ipLength) {
        if (ipLength < IcmpCodec.IP_HEADER + IcmpCodec.ICMP_HEADER || ipLength > 65535) {
            throw new IllegalArgumentException("icmp echo: IP length must be 28..65535, got " + ipLength);
        }
        if (size == slots) {
            return false;
        }
        int at = size * SLOT;
        int icmpLength = ipLength - IcmpCodec.IP_HEADER;
        long sum = payloadSums.of(icmpLength) + (IcmpCodec.TYPE_ECHO_REQUEST << 8) + (id & 0xffff) + (seq & 0xffff);
        while ((sum >> 16) != 0) {
            sum = (sum & 0xffff) + (sum >> 16);
        }
        int h = at + HEADER_AT; // the ICMP header in network order
        mem.put(h, (byte) IcmpCodec.TYPE_ECHO_REQUEST).put(h + 1, (byte) 0);
        mem.put(h + 2, (byte) (~sum >>> 8)).put(h + 3, (byte) ~sum);
        mem.put(h + 4, (byte) (id >>> 8)).put(h + 5, (byte) id).put(h + 6, (byte) (seq >>> 8)).put(h + 7, (byte) seq);
        int sa = at + MMSGHDR + 4;
        mem.put(sa, (byte) (dst >>> 24)).put(sa + 1, (byte) (dst >>> 16)).put(sa + 2, (byte) (dst >>> 8)).put(sa + 3, (byte) dst);
        mem.putLong(at + MMSGHDR + SOCKADDR + 24, icmpLength - IcmpCodec.ICMP_HEADER); // the payload iovec's length
        errnos[size] = 0;
        size++;
        return true;
    }


    public int size() {
        return size;
    }

    public int slots() {
        return slots;
    }

    /** After {@link IcmpSocket#send(IcmpEchoBatch)}: 0 when request {@code i} left, else the errno it failed with. */
    public int errno(int i) {
        return errnos[i];
    }

    /** {@link #errno(int)} as its name ({@code EMSGSIZE}), for messages. */
    public String errnoName(int i) {
        return org.jflannel.linuxnet.internal.Errno.name(errnos[i]);
    }

    /** Empties the batch (after the caller has read the errnos). */
    public void clear() {
        size = 0;
    }

    void failed(int i, int errno) {
        errnos[i] = errno;
    }

    long address(int i) {
        return address + (long) i * SLOT;
    }

    /** For tests: request {@code i}'s ICMP message as the kernel will send it (header + payload). */
    byte[] message(int i) {
        int at = i * SLOT;
        int payload = (int) mem.getLong(at + MMSGHDR + SOCKADDR + 24);
        byte[] m = new byte[IcmpCodec.ICMP_HEADER + payload];
        mem.get(at + HEADER_AT, m, 0, IcmpCodec.ICMP_HEADER);
        PATTERN.get(0, m, IcmpCodec.ICMP_HEADER, payload);
        return m;
    }

    /** For tests: request {@code i}'s sockaddr_in. */
    byte[] sockaddr(int i) {
        byte[] sa = new byte[SOCKADDR];
        mem.get(i * SLOT + MMSGHDR, sa);
        return sa;
    }
}
