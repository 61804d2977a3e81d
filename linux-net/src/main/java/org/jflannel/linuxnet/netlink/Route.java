package org.jflannel.linuxnet.netlink;

import java.net.Inet4Address;
import java.net.InetAddress;

/**
 * A route.
 *
 * @param dst      null = default route
 * @param gateway  null = none
 * @param linkIndex 0 = none (the kernel picks the device)
 * @param scope    RT_SCOPE_*
 * @param type     RTN_*
 * @param table    254 = main
 * @param protocol RTPROT_*, 3 (boot) by default
 * @param nexthopId 0 = none; else the route goes through that {@link Nexthop} ({@code nhid}): the request
 *                  carries only the id, and gateway, device and onlink are the nexthop's, as the kernel
 *                  reports them in a dump (net.ipv4.nexthop_compat_mode=1, the default)
 */
public record Route(IpPrefix dst, InetAddress gateway, int linkIndex, int scope, boolean onlink, int type, int table,
                    int protocol, int nexthopId) {
    public static final int SCOPE_UNIVERSE = 0;
    public static final int SCOPE_LINK = 253;
    public static final int SCOPE_HOST = 254;
    public static final int TYPE_UNICAST = 1;
    public static final int TYPE_LOCAL = 2;
    public static final int TYPE_BROADCAST = 3;
    public static final int TYPE_BLACKHOLE = 6;
    public static final int TABLE_MAIN = 254;
    public static final int TABLE_LOCAL = 255;
    public static final int PROTO_KERNEL = 2;
    public static final int PROTO_BOOT = 3;

    public Route {
        if (dst != null && gateway != null && (dst.address() instanceof Inet4Address) != (gateway instanceof Inet4Address)) {
            throw new IllegalArgumentException("route " + dst + ": gateway " + gateway.getHostAddress() + " is of another family");
        }
        if (linkIndex < 0 || scope < 0 || scope > 255 || type < 0 || type > 255 || table < 0 || protocol < 0 || protocol > 255) {
            throw new IllegalArgumentException("route " + dst + ": field out of range (link " + linkIndex + ", scope "
                    + scope + ", type " + type + ", table " + table + ", protocol " + protocol + ")");
        }
    }

    /** A route without a nexthop object. */
    public Route(IpPrefix dst, InetAddress gateway, int linkIndex, int scope, boolean onlink, int type, int table,
                 int protocol) {
        this(dst, gateway, linkIndex, scope, onlink, type, table, protocol, 0);
    }

    /** Flannel's per-peer VXLAN route: {@code ip route replace <dst> via <gw> dev <link> onlink}. */
    public static Route onlink(IpPrefix dst, InetAddress gw, int linkIndex) {
        return new Route(dst, gw, linkIndex, SCOPE_UNIVERSE, true, TYPE_UNICAST, TABLE_MAIN, PROTO_BOOT);
    }

    /** DirectRouting: {@code ip route replace <dst> via <gw>}; the kernel picks the device. */
    public static Route via(IpPrefix dst, InetAddress gw) {
        return new Route(dst, gw, 0, SCOPE_UNIVERSE, false, TYPE_UNICAST, TABLE_MAIN, PROTO_BOOT);
    }

    /** A device route with scope universe (the UDP backend's Network route). */
    public static Route device(IpPrefix dst, int linkIndex) {
        return new Route(dst, null, linkIndex, SCOPE_UNIVERSE, false, TYPE_UNICAST, TABLE_MAIN, PROTO_BOOT);
    }

    /**
     * {@code ip route replace <dst> nhid <id>}: the route through a nexthop object, described with the nexthop's
     * gateway and device as a dump shows it.
     */
    public static Route through(IpPrefix dst, Nexthop nh) {
        return new Route(dst, nh.gateway(), nh.linkIndex(), SCOPE_UNIVERSE, nh.onlink(), TYPE_UNICAST, TABLE_MAIN,
                PROTO_BOOT, nh.id());
    }

    public static Route blackhole(IpPrefix dst) {
        return new Route(dst, null, 0, SCOPE_UNIVERSE, false, TYPE_BLACKHOLE, TABLE_MAIN, PROTO_BOOT);
    }

    /** The same route in another table. */
    public Route inTable(int otherTable) {
        return new Route(dst, gateway, linkIndex, scope, onlink, type, otherTable, protocol, nexthopId);
    }

    /** Whether it is an IPv4 route (from dst, else gateway). */
    public boolean isIpv4() {
        return dst != null ? dst.isIpv4() : gateway instanceof Inet4Address;
    }

    /** Kernel-style summary for messages: {@code 10.244.3.0/24 via 10.244.3.0}. */
    String describe() {
        StringBuilder sb = new StringBuilder();
        if (type == TYPE_BLACKHOLE) {
            sb.append("blackhole ");
        }
        sb.append(dst == null ? "default" : dst.toString());
        if (nexthopId != 0) {
            sb.append(" nhid ").append(Integer.toUnsignedString(nexthopId));
        } else if (gateway != null) {
            sb.append(" via ").append(Inets.format(gateway));
        }
        if (table != TABLE_MAIN) {
            sb.append(" table ").append(table);
        }
        return sb.toString();
    }
}
