package org.jflannel.linuxnet.netlink;

import java.net.InetAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import org.jflannel.core.MacAddress;

/**
 * The rtattrs of one message or nest, indexed by type. Malformed lengths end the walk instead of
 * reading past the message: the kernel is trusted but a truncated buffer must not crash us.
 */
final class NlAttrs {
    private static final int MAX_TYPE = 127;
    private static final int TYPE_MASK = 0x3fff; // strips NLA_F_NESTED and NLA_F_NET_BYTEORDER

    private final ByteBuffer buf;
    /**
     * Per type up to the highest one present: {@code [2t]} the payload's offset + 1 (0: absent), {@code [2t+1]} its
     * length. Sized to the message (Ours, issue 23): two arrays of 128 types per message were ~1 KB of garbage for
     * each of the 30,000–40,000 messages a dump of 10,000 peers' entries decodes, which with the daemon's 2 MB
     * young generation pushed dumps' results into the old generation (full collections).
     */
    private final int[] slots;

    private NlAttrs(ByteBuffer buf, int[] slots) {
        this.buf = buf;
        this.slots = slots;
    }

    /** Indexes the attributes in {@code [from, to)} of {@code buf} (host byte order). */
    static NlAttrs parse(ByteBuffer buf, int from, int to) {
        ByteBuffer b = buf.duplicate().order(ByteOrder.nativeOrder());
        int max = -1;
        for (int at = from; at + 4 <= to; ) { // first walk: the highest type, to size the index
            int len = b.getShort(at) & 0xffff;
            int type = b.getShort(at + 2) & TYPE_MASK;
            if (len < 4 || at + len > to) {
                break;
            }
            if (type <= MAX_TYPE && type > max) {
                max = type;
            }
            at += (len + 3) & ~3;
        }
        int[] slots = new int[2 * (max + 1)];
        for (int at = from; at + 4 <= to; ) {
            int len = b.getShort(at) & 0xffff;
            int type = b.getShort(at + 2) & TYPE_MASK;
            if (len < 4 || at + len > to) {
                break;
            }
            if (type <= MAX_TYPE) {
                slots[2 * type] = at + 4 + 1;
                slots[2 * type + 1] = len - 4;
            }
            at += (len + 3) & ~3;
        }
        return new NlAttrs(b, slots);
    }

    boolean has(int type) {
        return type >= 0 && 2 * type < slots.length && slots[2 * type] != 0;
    }

    /** The payload's offset; only after {@link #has}. */
    private int at(int type) {
        return slots[2 * type] - 1;
    }

    /** The payload's length; only after {@link #has}. */
    private int len(int type) {
        return slots[2 * type + 1];
    }

    int length(int type) {
        return has(type) ? len(type) : -1;
    }

    int u8(int type, int dflt) {
        return has(type) && len(type) >= 1 ? buf.get(at(type)) & 0xff : dflt;
    }

    int u16(int type, int dflt) {
        return has(type) && len(type) >= 2 ? buf.getShort(at(type)) & 0xffff : dflt;
    }

    int be16(int type, int dflt) {
        return has(type) && len(type) >= 2
                ? ((buf.get(at(type)) & 0xff) << 8) | (buf.get(at(type) + 1) & 0xff) : dflt;
    }

    int u32(int type, int dflt) {
        return has(type) && len(type) >= 4 ? buf.getInt(at(type)) : dflt;
    }

    byte[] bytes(int type) {
        if (!has(type)) {
            return null;
        }
        byte[] b = new byte[len(type)];
        buf.get(at(type), b);
        return b;
    }

    /** A NUL-terminated string (terminator optional). */
    String string(int type) {
        byte[] b = bytes(type);
        if (b == null) {
            return null;
        }
        int n = 0;
        while (n < b.length && b[n] != 0) {
            n++;
        }
        return new String(b, 0, n, StandardCharsets.UTF_8);
    }

    /** An IPv4 or IPv6 address, or null when absent or of another size. */
    InetAddress ip(int type) {
        byte[] b = bytes(type);
        return b != null && (b.length == 4 || b.length == 16) ? Inets.of(b) : null;
    }

    /** A 6-byte MAC, or null when absent or of another size (e.g. a tunnel's 4-byte address). */
    MacAddress mac(int type) {
        byte[] b = bytes(type);
        return b != null && b.length == 6 ? MacAddress.of(b) : null;
    }

    NlAttrs nested(int type) {
        if (!has(type)) {
            return null;
        }
        return parse(buf, at(type), at(type) + len(type));
    }

    /** Offset of the payload of {@code type} (for nests that start with a struct, like VETH_INFO_PEER). */
    int offset(int type) {
        return has(type) ? at(type) : -1;
    }
}
