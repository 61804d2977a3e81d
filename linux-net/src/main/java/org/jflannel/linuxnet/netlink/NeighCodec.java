package org.jflannel.linuxnet.netlink;

import static org.jflannel.linuxnet.netlink.Rtnl.*;

import java.net.InetAddress;
import java.nio.ByteBuffer;
import org.jflannel.core.MacAddress;

/**
 * RTM_*NEIGH messages for ARP/NDP entries and for VXLAN FDB entries (AF_BRIDGE + NTF_SELF).
 * Attribute order as iproute2 sends them: `ip neigh` NDA_DST then NDA_LLADDR; `bridge fdb` NDA_LLADDR then NDA_DST.
 */
final class NeighCodec {
    static final int NDMSG_LEN = 12;
    static final int RTN_UNICAST = 1;

    private NeighCodec() {
    }

    private static void ndmsg(NlWriter w, int family, int index, int state, int flags, int type) {
        w.u8(family).u8(0).u16(0).u32(index).u16(state).u8(flags).u8(type);
    }

    /** Flannel's NeighSet: state NUD_PERMANENT, type RTN_UNICAST. */
    static void neighbour(NlWriter w, Neighbour n) {
        ndmsg(w, family(n.ip()), n.linkIndex(), n.state(), 0, RTN_UNICAST);
        w.attrIp(NDA_DST, n.ip());
        if (n.mac() != null) {
            w.attr(NDA_LLADDR, n.mac().bytes());
        }
    }

    /** Flannel's FDB NeighSet: AF_BRIDGE, NTF_SELF, NUD_PERMANENT (`bridge` itself would send NOARP|PERMANENT). */
    static void fdb(NlWriter w, FdbEntry e) {
        ndmsg(w, AF_BRIDGE, e.linkIndex(), Neighbour.NUD_PERMANENT, NTF_SELF, 0);
        w.attr(NDA_LLADDR, e.mac().bytes());
        w.attrIp(NDA_DST, e.dst());
    }

    static void dump(NlWriter w, int family) {
        ndmsg(w, family, 0, 0, 0, 0);
    }

    static boolean isBridge(ByteBuffer b, int off) {
        return off < b.limit() && (b.get(off) & 0xff) == AF_BRIDGE;
    }

    /** An ARP/NDP entry, or null for other families or entries without an address. */
    static Neighbour decodeNeighbour(ByteBuffer b, int off, int len) {
        if (len < NDMSG_LEN) {
            return null; // a message shorter than its family header, or with fields no record of ours can hold (a table ID beyond 2^31, a prefix longer than its family), is skipped: an exception here ended a dump or the monitor thread (NetlinkDecodeFuzzTest)
        }
        int family = b.get(off) & 0xff;
        if (family != AF_INET && family != AF_INET6) {
            return null;
        }
        NlAttrs a = NlAttrs.parse(b, off + NDMSG_LEN, off + len);
        InetAddress ip = a.ip(NDA_DST);
        int index = b.getInt(off + 4);
        if (ip == null || index <= 0) {
            return null;
        }
        try {
            return new Neighbour(index, ip, a.mac(NDA_LLADDR), b.getShort(off + 8) & 0xffff);
        } catch (IllegalArgumentException unrepresentable) {
            return null;
        }
    }

    /** A VXLAN FDB entry, or null for entries without a remote destination (bridge port MACs, multicast). */
    static FdbEntry decodeFdb(ByteBuffer b, int off, int len) {
        if (len < NDMSG_LEN || !isBridge(b, off)) {
            return null;
        }
        NlAttrs a = NlAttrs.parse(b, off + NDMSG_LEN, off + len);
        MacAddress mac = a.mac(NDA_LLADDR);
        InetAddress dst = a.ip(NDA_DST);
        int index = b.getInt(off + 4);
        if (mac == null || dst == null || index <= 0) {
            return null;
        }
        try {
            return new FdbEntry(index, mac, dst);
        } catch (IllegalArgumentException unrepresentable) {
            return null;
        }
    }
}
