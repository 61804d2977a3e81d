package org.jflannel.linuxnet.netlink;

import static org.jflannel.linuxnet.netlink.Rtnl.*;

import java.nio.ByteBuffer;

/** Turns one rtnetlink multicast message into a typed event (null for types we do not report). */
final class EventCodec {
    private EventCodec() {
    }

    static NetlinkEvent decode(int type, ByteBuffer b, int off, int len) {
        return switch (type) {
            case RTM_NEWLINK, RTM_DELLINK -> {
                Link l = LinkCodec.decode(b, off, len);
                yield l == null ? null : new NetlinkEvent.LinkEvent(l, type == RTM_DELLINK);
            }
            case RTM_NEWADDR, RTM_DELADDR -> {
                Address a = AddrCodec.decode(b, off, len);
                yield a == null ? null : new NetlinkEvent.AddressEvent(a, type == RTM_DELADDR);
            }
            case RTM_NEWROUTE, RTM_DELROUTE -> {
                Route r = RouteCodec.decode(b, off, len);
                yield r == null ? null : new NetlinkEvent.RouteEvent(r, type == RTM_DELROUTE);
            }
            case RTM_NEWNEIGH, RTM_DELNEIGH -> neigh(type, b, off, len);
            default -> null;
        };
    }

    private static NetlinkEvent neigh(int type, ByteBuffer b, int off, int len) {
        boolean deleted = type == RTM_DELNEIGH;
        if (NeighCodec.isBridge(b, off)) {
            FdbEntry e = NeighCodec.decodeFdb(b, off, len);
            return e == null ? null : new NetlinkEvent.FdbEvent(e, deleted);
        }
        Neighbour n = NeighCodec.decodeNeighbour(b, off, len);
        return n == null ? null : new NetlinkEvent.NeighbourEvent(n, deleted);
    }
}
