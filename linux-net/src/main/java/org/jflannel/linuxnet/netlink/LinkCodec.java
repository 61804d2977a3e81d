package org.jflannel.linuxnet.netlink;

import static org.jflannel.linuxnet.netlink.Rtnl.*;

import java.net.Inet4Address;
import java.nio.ByteBuffer;
import org.jflannel.core.MacAddress;

/** RTM_*LINK messages: request encoders and the ifinfomsg + attributes decoder. */
final class LinkCodec {
    static final int IFINFOMSG_LEN = 16;

    private LinkCodec() {
    }

    /** Creates a VXLAN device with flannel's attribute set (REFERENCE §6.1), in the order the netlink Go library sends them. */
    static void newVxlan(NlWriter w, VxlanSpec s) {
        w.ifinfomsg(AF_UNSPEC, 0, 0, 0);
        w.attrString(IFLA_IFNAME, s.name());
        if (s.mtu() > 0) {
            w.attrU32(IFLA_MTU, s.mtu());
        }
        if (s.mac() != null) {
            w.attr(IFLA_ADDRESS, s.mac().bytes());
        }
        int info = w.nest(IFLA_LINKINFO);
        w.attrString(IFLA_INFO_KIND, "vxlan");
        int data = w.nest(IFLA_INFO_DATA);
        w.attrU32(IFLA_VXLAN_ID, s.vni());
        if (s.underlayIndex() > 0) {
            w.attrU32(IFLA_VXLAN_LINK, s.underlayIndex());
        }
        if (s.local() != null) {
            w.attrIp(s.local() instanceof Inet4Address ? IFLA_VXLAN_LOCAL : IFLA_VXLAN_LOCAL6, s.local());
        }
        w.attrU8(IFLA_VXLAN_TTL, 0);
        w.attrU8(IFLA_VXLAN_TOS, 0);
        w.attrU8(IFLA_VXLAN_LEARNING, s.learning() ? 1 : 0);
        w.attrU8(IFLA_VXLAN_PROXY, 0);
        w.attrU8(IFLA_VXLAN_RSC, 0);
        w.attrU8(IFLA_VXLAN_L2MISS, 0);
        w.attrU8(IFLA_VXLAN_L3MISS, 0);
        w.attrU8(IFLA_VXLAN_UDP_ZERO_CSUM6_TX, 0);
        w.attrU8(IFLA_VXLAN_UDP_ZERO_CSUM6_RX, 0);
        if (s.gbp()) {
            w.attrFlag(IFLA_VXLAN_GBP);
        }
        if (s.port() > 0) {
            w.attrBe16(IFLA_VXLAN_PORT, s.port());
        }
        w.end(data);
        w.end(info);
    }

    /**
     * A VXLAN-GPE device in external (collect-metadata) mode, as {@code ip link add NAME type vxlan gpe external
     * dstport PORT} makes it: an L3 device without a link-layer header that decapsulates raw IP carried to
     * {@code port} from any sender and VNI. Learning off, which the kernel requires with GPE. Attributes in iproute2's order.
     */
    static void newVxlanGpe(NlWriter w, String name, int port) {
        w.ifinfomsg(AF_UNSPEC, 0, 0, 0);
        w.attrString(IFLA_IFNAME, name);
        int info = w.nest(IFLA_LINKINFO);
        w.attrString(IFLA_INFO_KIND, "vxlan");
        int data = w.nest(IFLA_INFO_DATA);
        w.attrFlag(IFLA_VXLAN_GPE);
        w.attrU8(IFLA_VXLAN_COLLECT_METADATA, 1);
        w.attrU8(IFLA_VXLAN_LEARNING, 0);
        w.attrBe16(IFLA_VXLAN_PORT, port);
        w.end(data);
        w.end(info);
    }

    /**
     * An IPv4-in-IPv4 tunnel device (kind {@code ipip}) as upstream flannel's netlink library creates
     * {@code flannel.ipip}: {@code local} (null: any), remote any, then PMTUDISC 0 (no DF on the outer
     * header), TTL 0 (inherit), TOS 0 and no FOU/GUE encapsulation, in its order. Unlike that library (v1.3.x, which
     * ends with IFLA_IPTUN_PROTO 0, "any": MPLS-in-IP too) no IFLA_IPTUN_PROTO: the kernel's default, IPPROTO_IPIP.
     * The MTU is set afterwards (the kernel derives one at creation).
     */
    static void newIpip(NlWriter w, String name, Inet4Address local) {
        w.ifinfomsg(AF_UNSPEC, 0, 0, 0);
        w.attrString(IFLA_IFNAME, name);
        int info = w.nest(IFLA_LINKINFO);
        w.attrString(IFLA_INFO_KIND, "ipip");
        int data = w.nest(IFLA_INFO_DATA);
        if (local != null) {
            w.attrIp(IFLA_IPTUN_LOCAL, local);
        }
        w.attrU8(IFLA_IPTUN_PMTUDISC, 0);
        w.attrU8(IFLA_IPTUN_TTL, 0);
        w.attrU8(IFLA_IPTUN_TOS, 0);
        w.attrU16(IFLA_IPTUN_ENCAP_TYPE, 0);
        w.attrU16(IFLA_IPTUN_ENCAP_FLAGS, 0);
        w.attrBe16(IFLA_IPTUN_ENCAP_SPORT, 0);
        w.attrBe16(IFLA_IPTUN_ENCAP_DPORT, 0);
        w.end(data);
        w.end(info);
    }

    /** A device with only a kind (dummy, bridge). */
    static void newSimple(NlWriter w, String name, String kind) {
        w.ifinfomsg(AF_UNSPEC, 0, 0, 0);
        w.attrString(IFLA_IFNAME, name);
        int info = w.nest(IFLA_LINKINFO);
        w.attrString(IFLA_INFO_KIND, kind);
        w.end(info);
    }

    static void newVeth(NlWriter w, String name, String peer) {
        w.ifinfomsg(AF_UNSPEC, 0, 0, 0);
        w.attrString(IFLA_IFNAME, name);
        int info = w.nest(IFLA_LINKINFO);
        w.attrString(IFLA_INFO_KIND, "veth");
        int data = w.nest(IFLA_INFO_DATA);
        int p = w.nest(VETH_INFO_PEER);
        w.ifinfomsg(AF_UNSPEC, 0, 0, 0);
        w.attrString(IFLA_IFNAME, peer);
        w.end(p);
        w.end(data);
        w.end(info);
    }

    /** A change to an existing device: flags under {@code change}, then attributes the caller appends. */
    static void set(NlWriter w, int index, int flags, int change) {
        w.ifinfomsg(AF_UNSPEC, index, flags, change);
    }

    static void vxlanLearning(NlWriter w, int index, boolean learning) {
        w.ifinfomsg(AF_UNSPEC, index, 0, 0);
        int info = w.nest(IFLA_LINKINFO);
        w.attrString(IFLA_INFO_KIND, "vxlan");
        int data = w.nest(IFLA_INFO_DATA);
        w.attrU8(IFLA_VXLAN_LEARNING, learning ? 1 : 0);
        w.end(data);
        w.end(info);
    }

    /** RTM_DELLINK or RTM_GETLINK by index (name null) or by name (index 0). */
    static void byIndexOrName(NlWriter w, int index, String name) {
        w.ifinfomsg(AF_UNSPEC, index, 0, 0);
        if (name != null) {
            w.attrString(IFLA_IFNAME, name);
        }
        w.attrU32(IFLA_EXT_MASK, RTEXT_FILTER_SKIP_STATS);
    }

    static void dump(NlWriter w) {
        w.ifinfomsg(AF_UNSPEC, 0, 0, 0);
        w.attrU32(IFLA_EXT_MASK, RTEXT_FILTER_SKIP_STATS);
    }

    /** Decodes an ifinfomsg payload starting at {@code off}. */
    static Link decode(ByteBuffer b, int off, int len) {
        if (len < IFINFOMSG_LEN) {
            return null; // a message shorter than its family header, or with fields no record of ours can hold (a table ID beyond 2^31, a prefix longer than its family), is skipped: an exception here ended a dump or the monitor thread (NetlinkDecodeFuzzTest)
        }
        int index = b.getInt(off + 4);
        int flags = b.getInt(off + 8);
        NlAttrs a = NlAttrs.parse(b, off + IFINFOMSG_LEN, off + len);
        String kind = "";
        VxlanInfo vx = null;
        IptunInfo tun = null;
        NlAttrs info = a.nested(IFLA_LINKINFO);
        if (info != null) {
            String k = info.string(IFLA_INFO_KIND);
            kind = k == null ? "" : k;
            NlAttrs data = info.nested(IFLA_INFO_DATA);
            if ("vxlan".equals(kind) && data != null) {
                vx = decodeVxlan(data);
            } else if ("ipip".equals(kind) && data != null) {
                tun = decodeIptun(data);
            }
        }
        String name = a.string(IFLA_IFNAME);
        MacAddress mac = a.mac(IFLA_ADDRESS);
        try {
            return new Link(index, name == null ? "" : name, kind, a.u32(IFLA_MTU, 0), mac, (flags & Link.IFF_UP) != 0,
                    flags, vx, tun);
        } catch (IllegalArgumentException unrepresentable) {
            return null;
        }
    }

    /** IFLA_IPTUN_* of an ipip device; an address of the wrong length reads as unset (any). */
    static IptunInfo decodeIptun(NlAttrs d) {
        return new IptunInfo(v4(d.ip(IFLA_IPTUN_LOCAL)), v4(d.ip(IFLA_IPTUN_REMOTE)), d.u32(IFLA_IPTUN_LINK, 0),
                d.u8(IFLA_IPTUN_TTL, 0), d.u8(IFLA_IPTUN_TOS, 0), d.u8(IFLA_IPTUN_PMTUDISC, 1) != 0,
                d.u8(IFLA_IPTUN_PROTO, 4), d.u16(IFLA_IPTUN_ENCAP_TYPE, 0), d.has(IFLA_IPTUN_COLLECT_METADATA));
    }

    private static Inet4Address v4(java.net.InetAddress a) {
        return a instanceof Inet4Address v ? v : null;
    }

    static VxlanInfo decodeVxlan(NlAttrs d) {
        var local = d.has(IFLA_VXLAN_LOCAL) ? d.ip(IFLA_VXLAN_LOCAL) : d.ip(IFLA_VXLAN_LOCAL6);
        var group = d.has(IFLA_VXLAN_GROUP) ? d.ip(IFLA_VXLAN_GROUP) : d.ip(IFLA_VXLAN_GROUP6);
        return new VxlanInfo(d.u32(IFLA_VXLAN_ID, 0), d.u32(IFLA_VXLAN_LINK, 0), local, group,
                d.be16(IFLA_VXLAN_PORT, 8472), d.u8(IFLA_VXLAN_LEARNING, 0) != 0, d.has(IFLA_VXLAN_GBP),
                d.u8(IFLA_VXLAN_L2MISS, 0) != 0, d.u8(IFLA_VXLAN_L3MISS, 0) != 0, d.u8(IFLA_VXLAN_PROXY, 0) != 0,
                d.u8(IFLA_VXLAN_RSC, 0) != 0, d.u8(IFLA_VXLAN_TTL, 0), d.u8(IFLA_VXLAN_TOS, 0),
                d.u8(IFLA_VXLAN_UDP_ZERO_CSUM6_TX, 0) != 0, d.u8(IFLA_VXLAN_UDP_ZERO_CSUM6_RX, 0) != 0);
    }
}
