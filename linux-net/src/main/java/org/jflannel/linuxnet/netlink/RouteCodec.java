package org.jflannel.linuxnet.netlink;

import static org.jflannel.linuxnet.netlink.Rtnl.*;

import java.net.InetAddress;
import java.nio.ByteBuffer;

/**
 * RTM_*ROUTE messages. Attribute order as iproute2 sends them: RTA_DST, RTA_GATEWAY, RTA_OIF; a route through a
 * nexthop object RTA_DST, RTA_NH_ID and nothing of the nexthop (the kernel refuses both, and a delete naming
 * a gateway or device does not match a route with {@code nhid}).
 */
final class RouteCodec {
    static final int RTMSG_LEN = 12;

    private RouteCodec() {
    }

    static void route(NlWriter w, Route r, boolean delete) {
        int family = r.isIpv4() ? AF_INET : AF_INET6;
        int table = r.table();
        boolean viaId = r.nexthopId() != 0;
        // deletes match on what is given; scope RT_SCOPE_NOWHERE(255), protocol 0 and (unicast) type 0 mean "any",
        // byte for byte what `ip route del` sends
        w.u8(family).u8(r.dst() == null ? 0 : r.dst().prefixLength()).u8(0).u8(0)
                .u8(table < 256 ? table : 0 /* RT_TABLE_UNSPEC + RTA_TABLE, as iproute2 */).u8(delete ? 0 : r.protocol())
                .u8(delete ? 255 : r.scope()).u8(delete && r.type() == Route.TYPE_UNICAST ? 0 : r.type()).u32(r.onlink() && !viaId ? RTNH_F_ONLINK : 0);
        if (r.dst() != null) {
            w.attrIp(RTA_DST, r.dst().address());
        }
        if (viaId) {
            w.attrU32(RTA_NH_ID, r.nexthopId());
        } else {
            if (r.gateway() != null) {
                w.attrIp(RTA_GATEWAY, r.gateway());
            }
            if (r.linkIndex() > 0) {
                w.attrU32(RTA_OIF, r.linkIndex());
            }
        }
        if (table >= 256) {
            w.attrU32(RTA_TABLE, table);
        }
    }

    static void dump(NlWriter w, int family) {
        w.u8(family).u8(0).u8(0).u8(0).u8(0).u8(0).u8(0).u8(0).u32(0);
    }

    /** `ip route get <dst>`. */
    static void get(NlWriter w, InetAddress dst) {
        // RTM_F_LOOKUP_TABLE (0x1000), as iproute2 sends for IPv4: the reply names the table the route
        // came from. IPv6 with strict checking refuses every flag but RTM_F_FIB_MATCH ("ipv6: Invalid
        // flags for get route request", EINVAL), so none there.
        boolean v4 = family(dst) == AF_INET;
        w.u8(family(dst)).u8(v4 ? 32 : 128).u8(0).u8(0).u8(0).u8(0).u8(0).u8(0).u32(v4 ? 0x1000 : 0);
        w.attrIp(RTA_DST, dst);
    }

    /** The route, or null: a message shorter than its family header, or with fields no record of ours can hold (a table ID beyond 2^31, a prefix longer than its family), is skipped: an exception here ended a dump or the monitor thread (NetlinkDecodeFuzzTest). */
    static Route decode(ByteBuffer b, int off, int len) {
        if (len < RTMSG_LEN) {
            return null;
        }
        int dstLen = b.get(off + 1) & 0xff;
        int table = b.get(off + 4) & 0xff;
        int protocol = b.get(off + 5) & 0xff;
        int scope = b.get(off + 6) & 0xff;
        int type = b.get(off + 7) & 0xff;
        int flags = b.getInt(off + 8);
        NlAttrs a = NlAttrs.parse(b, off + RTMSG_LEN, off + len);
        InetAddress dst = a.ip(RTA_DST);
        try {
            IpPrefix prefix = dst == null || dstLen == 0 ? null : new IpPrefix(dst, dstLen);
            return new Route(prefix, a.ip(RTA_GATEWAY), a.u32(RTA_OIF, 0), scope, (flags & RTNH_F_ONLINK) != 0, type,
                    a.u32(RTA_TABLE, table), protocol, a.u32(RTA_NH_ID, 0));
        } catch (IllegalArgumentException unrepresentable) {
            return null;
        }
    }

    static boolean isCloned(ByteBuffer b, int off) {
        return (b.getInt(off + 8) & RTM_F_CLONED) != 0;
    }
}
