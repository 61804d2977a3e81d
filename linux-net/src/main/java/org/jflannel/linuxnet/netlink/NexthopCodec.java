package org.jflannel.linuxnet.netlink;

import static org.jflannel.linuxnet.netlink.Rtnl.*;

import java.net.InetAddress;
import java.nio.ByteBuffer;

/**
 * RTM_*NEXTHOP messages (linux/nexthop.h: struct nhmsg, 8 bytes, then NHA_* attributes). Byte for byte what
 * iproute2's {@code ip nexthop} sends: NHA_ID, NHA_GATEWAY, NHA_OIF; a delete carries only the id.
 */
final class NexthopCodec {
    static final int NHMSG_LEN = 8;

    private NexthopCodec() {
    }

    static void nexthop(NlWriter w, Nexthop nh) {
        w.u8(family(nh.gateway())).u8(0 /* scope: the kernel sets link for a gateway */).u8(nh.protocol()).u8(0)
                .u32(nh.onlink() ? RTNH_F_ONLINK : 0);
        w.attrU32(NHA_ID, nh.id());
        w.attrIp(NHA_GATEWAY, nh.gateway());
        w.attrU32(NHA_OIF, nh.linkIndex());
    }

    /** {@code ip nexthop del id <id>}: the id alone names it. */
    static void delete(NlWriter w, int id) {
        w.u8(AF_UNSPEC).u8(0).u8(0).u8(0).u32(0);
        w.attrU32(NHA_ID, id);
    }

    /** {@code ip nexthop show dev <link>}: the kernel filters by device (0 = all). */
    static void dump(NlWriter w, int linkIndex) {
        w.u8(AF_UNSPEC).u8(0).u8(0).u8(0).u32(0);
        if (linkIndex > 0) {
            w.attrU32(NHA_OIF, linkIndex);
        }
    }

    /** A single-gateway nexthop, or null for groups, blackholes and nexthops without a gateway. */
    static Nexthop decode(ByteBuffer b, int off, int len) {
        if (len < NHMSG_LEN) {
            return null; // a message shorter than its family header, or with fields no record of ours can hold (a table ID beyond 2^31, a prefix longer than its family), is skipped: an exception here ended a dump or the monitor thread (NetlinkDecodeFuzzTest)
        }
        int protocol = b.get(off + 2) & 0xff;
        int flags = b.getInt(off + 4);
        NlAttrs a = NlAttrs.parse(b, off + NHMSG_LEN, off + len);
        InetAddress gw = a.ip(NHA_GATEWAY);
        int oif = a.u32(NHA_OIF, 0);
        if (a.has(NHA_GROUP) || a.has(NHA_BLACKHOLE) || gw == null || oif <= 0 || !a.has(NHA_ID)) {
            return null;
        }
        try {
            return new Nexthop(a.u32(NHA_ID, 0), gw, oif, (flags & RTNH_F_ONLINK) != 0, protocol);
        } catch (IllegalArgumentException unrepresentable) {
            return null;
        }
    }
}
