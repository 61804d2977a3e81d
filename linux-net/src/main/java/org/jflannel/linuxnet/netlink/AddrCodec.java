package org.jflannel.linuxnet.netlink;

import static org.jflannel.linuxnet.netlink.Rtnl.*;

import java.net.InetAddress;
import java.nio.ByteBuffer;

/** RTM_*ADDR messages. Attribute order as iproute2 sends them: IFA_LOCAL, then IFA_ADDRESS. */
final class AddrCodec {
    static final int IFADDRMSG_LEN = 8;

    private AddrCodec() {
    }

    static void address(NlWriter w, int index, IpPrefix p) {
        w.u8(family(p.address())).u8(p.prefixLength()).u8(0).u8(Route.SCOPE_UNIVERSE).u32(index);
        w.attrIp(IFA_LOCAL, p.address());
        w.attrIp(IFA_ADDRESS, p.address());
    }

    static void dump(NlWriter w, int family) {
        w.u8(family).u8(0).u8(0).u8(0).u32(0);
    }

    /** The address, or null: a message shorter than its family header, or with fields no record of ours can hold (a table ID beyond 2^31, a prefix longer than its family), is skipped: an exception here ended a dump or the monitor thread (NetlinkDecodeFuzzTest). */
    static Address decode(ByteBuffer b, int off, int len) {
        if (len < IFADDRMSG_LEN) {
            return null;
        }
        int prefixLen = b.get(off + 1) & 0xff;
        int flags = b.get(off + 2) & 0xff;
        int scope = b.get(off + 3) & 0xff;
        int index = b.getInt(off + 4);
        NlAttrs a = NlAttrs.parse(b, off + IFADDRMSG_LEN, off + len);
        // IFA_LOCAL is the interface's own address; IFA_ADDRESS is the peer on point-to-point links.
        InetAddress ip = a.has(IFA_LOCAL) ? a.ip(IFA_LOCAL) : a.ip(IFA_ADDRESS);
        if (ip == null) {
            return null;
        }
        try {
            return new Address(index, new IpPrefix(ip, prefixLen), scope, a.u32(IFA_FLAGS, flags));
        } catch (IllegalArgumentException unrepresentable) {
            return null;
        }
    }
}
