package org.jflannel.linuxnet.socket;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.jflannel.linuxnet.internal.LibC;

/**
 * Receive slots for one {@code recvmmsg} on an {@link IcmpSocket} (struct mmsghdr[] with one iovec
 * and a control buffer each, built once), and the decoded fields of what it received, kept in int
 * arrays so that reading a thousand replies allocates nothing. Slot {@code i} of the last
 * {@link IcmpSocket#receive(IcmpBatch)} is about one of our echo requests when {@link #kind(int)} is
 * not null. A slot holds only the first {@value #SLOT} bytes of a packet: all the headers the decoder
 * reads (a 1,400-byte echo reply is not copied). Not thread-safe.
 */
public final class IcmpBatch {
    /** Bytes kept of each packet: outer IP (≤ 60) + ICMP (8) + quoted IP (≤ 60) + quoted ICMP (8). */
    static final int SLOT = 160;
    private static final int MMSGHDR = 64;
    private static final int MSGHDR_CONTROLLEN = 40;
    private static final int MSGHDR_FLAGS = 48;
    private static final int MMSG_LEN = 56;
    private static final int IOVEC = 16;
    /** CMSG_SPACE(sizeof(struct timespec)) = 32, with room to spare. */
    private static final int CONTROL = 64;

    private final int slots;
    private final ByteBuffer data;
    /** mmsghdr[slots] | iovec[slots] | control[slots]. */
    private final ByteBuffer meta;
    private final long metaAddress;
    private final int[] fields;
    private final long[] stamps;
    private final boolean[] valid;

    public IcmpBatch(int slots) {
        if (slots < 1 || slots > 1024) {
            throw new IllegalArgumentException("icmp batch: expected 1..1024 slots, got " + slots);
        }
        this.slots = slots;
        this.data = ByteBuffer.allocateDirect(slots * SLOT); // big-endian, as packets are read
        this.meta = ByteBuffer.allocateDirect(slots * (MMSGHDR + IOVEC + CONTROL)).order(ByteOrder.nativeOrder());
        this.metaAddress = LibC.address(meta);
        this.fields = new int[slots * IcmpCodec.FIELDS];
        this.stamps = new long[slots];
        this.valid = new boolean[slots];
        long dataAddress = LibC.address(data);
        for (int i = 0; i < slots; i++) {
            int h = i * MMSGHDR;
            int iov = slots * MMSGHDR + i * IOVEC;
            meta.putLong(iov, dataAddress + (long) i * SLOT);
            meta.putLong(iov + 8, SLOT);
            meta.putLong(h, 0);                               // msg_name: not needed, the IP header has it
            meta.putLong(h + 16, metaAddress + iov);          // msg_iov
            meta.putLong(h + 24, 1);                          // msg_iovlen
            meta.putLong(h + 32, metaAddress + controlAt(i)); // msg_control
        }
    }

    public int slots() {
        return slots;
    }

    /** What slot {@code i} carries; null when it is not about an echo request (or too short to tell). */
    public IcmpMessage.Kind kind(int i) {
        return valid[i] ? IcmpCodec.KINDS[fields[i * IcmpCodec.FIELDS + IcmpCodec.F_KIND]] : null;
    }

    public int code(int i) {
        return fields[i * IcmpCodec.FIELDS + IcmpCodec.F_CODE];
    }

    /** The sender of the message, IPv4 as a big-endian int. */
    public int from(int i) {
        return fields[i * IcmpCodec.FIELDS + IcmpCodec.F_FROM];
    }

    /** Where our echo request was going, IPv4 as a big-endian int (see {@link IcmpSocket#address}). */
    public int target(int i) {
        return fields[i * IcmpCodec.FIELDS + IcmpCodec.F_TARGET];
    }

    public int id(int i) {
        return fields[i * IcmpCodec.FIELDS + IcmpCodec.F_ID];
    }

    public int seq(int i) {
        return fields[i * IcmpCodec.FIELDS + IcmpCodec.F_SEQ];
    }

    public int nextHopMtu(int i) {
        return fields[i * IcmpCodec.FIELDS + IcmpCodec.F_MTU];
    }

    /**
     * When the kernel received slot {@code i}'s packet (SO_TIMESTAMPNS, CLOCK_REALTIME, ns since the
     * epoch): a round-trip time taken from it does not grow with how late the reader came. 0 when the
     * kernel gave none.
     */
    public long kernelTimestampNanos(int i) {
        return stamps[i];
    }

    /** Slot {@code i} as a message (allocates: for the rare cases that need one, such as an error to describe). */
    public IcmpMessage message(int i) {
        int b = i * IcmpCodec.FIELDS;
        return new IcmpMessage(IcmpCodec.ip(fields[b + IcmpCodec.F_FROM]), kind(i), fields[b + IcmpCodec.F_CODE],
                IcmpCodec.ip(fields[b + IcmpCodec.F_TARGET]), fields[b + IcmpCodec.F_ID], fields[b + IcmpCodec.F_SEQ],
                fields[b + IcmpCodec.F_MTU]);
    }

    long address() {
        return metaAddress;
    }

    /** Before a receive: the kernel shrinks controllen to what it wrote. */
    void reset() {
        for (int i = 0; i < slots; i++) {
            int h = i * MMSGHDR;
            meta.putLong(h + MSGHDR_CONTROLLEN, CONTROL);
            meta.putInt(h + MSGHDR_FLAGS, 0);
        }
    }

    /** After a receive of {@code n} packets: decodes each slot's headers and finds its timestamp. */
    void decode(int n) {
        for (int i = 0; i < n; i++) {
            int len = Math.min(meta.getInt(i * MMSGHDR + MMSG_LEN), SLOT);
            valid[i] = IcmpCodec.decode(data, i * SLOT, len, fields, i * IcmpCodec.FIELDS);
            stamps[i] = timestamp(i);
        }
    }

    private long timestamp(int i) {
        long len = meta.getLong(i * MMSGHDR + MSGHDR_CONTROLLEN);
        int base = controlAt(i);
        int at = 0;
        while (at + 16 <= len) { // struct cmsghdr { size_t len; int level; int type; } data
            long cmsgLen = meta.getLong(base + at);
            if (cmsgLen < 16 || at + cmsgLen > len) {
                break;
            }
            if (meta.getInt(base + at + 8) == LibC.SOL_SOCKET && meta.getInt(base + at + 12) == LibC.SO_TIMESTAMPNS
                    && cmsgLen >= 32) {
                return meta.getLong(base + at + 16) * 1_000_000_000L + meta.getLong(base + at + 24);
            }
            at += (int) ((cmsgLen + 7) & ~7L);
        }
        return 0;
    }

    private int controlAt(int i) {
        return slots * (MMSGHDR + IOVEC) + i * CONTROL;
    }

    /** For tests: puts a packet into slot {@code i} as if received, with a timestamp control message. */
    void fill(int i, byte[] packet, long stampNanos) {
        data.put(i * SLOT, packet, 0, Math.min(packet.length, SLOT));
        meta.putInt(i * MMSGHDR + MMSG_LEN, packet.length);
        int c = controlAt(i);
        meta.putLong(c, 32).putInt(c + 8, LibC.SOL_SOCKET).putInt(c + 12, LibC.SO_TIMESTAMPNS)
                .putLong(c + 16, stampNanos / 1_000_000_000L).putLong(c + 24, stampNanos % 1_000_000_000L);
        meta.putLong(i * MMSGHDR + MSGHDR_CONTROLLEN, stampNanos == 0 ? 0 : 32);
    }
}
