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
    private final int[] offset = new int[MAX_TYPE + 1];
    private final int[] length = new int[MAX_TYPE + 1];

    private NlAttrs(ByteBuffer buf) {
        this.buf = buf;
    }

    /** Indexes the attributes in {@code [from, to)} of {@code buf} (host byte order). */
    static NlAttrs parse(ByteBuffer buf, int from, int to) {
        NlAttrs a = new NlAttrs(buf.duplicate().order(ByteOrder.nativeOrder()));
        java.util.Arrays.fill(a.offset, -1);
        int at = from;
        while (at + 4 <= to) {
            int len = a.buf.getShort(at) & 0xffff;
            int type = a.buf.getShort(at + 2) & TYPE_MASK;
            if (len < 4 || at + len > to) {
                break;
            }
            if (type <= MAX_TYPE) {
                a.offset[type] = at + 4;
                a.length[type] = len - 4;
            }
            at += (len + 3) & ~3;
        }
        return a;
    }

    boolean has(int type) {
        return type <= MAX_TYPE && offset[type] >= 0;
    }

    int length(int type) {
        return has(type) ? length[type] : -1;
    }

    int u8(int type, int dflt) {
        return has(type) && length[type] >= 1 ? buf.get(offset[type]) & 0xff : dflt;
    }

    int u16(int type, int dflt) {
        return has(type) && length[type] >= 2 ? buf.getShort(offset[type]) & 0xffff : dflt;
    }

    int be16(int type, int dflt) {
        return has(type) && length[type] >= 2
                ? ((buf.get(offset[type]) & 0xff) << 8) | (buf.get(offset[type] + 1) & 0xff) : dflt;
    }

    int u32(int type, int dflt) {
        return has(type) && length[type] >= 4 ? buf.getInt(offset[type]) : dflt;
    }

    byte[] bytes(int type) {
        if (!has(type)) {
            return null;
        }
        byte[] b = new byte[length[type]];
        buf.get(offset[type], b);
        return b;
    }

    /** A NUL-terminated string (terminator optional). */
    String string(int type) {
        return has(type) ? cString(buf, offset[type], length[type]) : null;
    }

    /** The NUL-terminated string (terminator optional) in the {@code len} bytes at {@code at} of {@code b}. */
    static String cString(ByteBuffer b, int at, int len) {
        byte[] s = new byte[len];
        b.get(at, s);
        int n = 0;
        while (n < s.length && s[n] != 0) {
            n++;
        }
        return new String(s, 0, n, StandardCharsets.UTF_8);
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
        return parse(buf, offset[type], offset[type] + length[type]);
    }

    /** Offset of the payload of {@code type} (for nests that start with a struct, like VETH_INFO_PEER). */
    int offset(int type) {
        return has(type) ? offset[type] : -1;
    }
}
