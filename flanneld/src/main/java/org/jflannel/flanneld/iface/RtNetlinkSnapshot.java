package org.jflannel.flanneld.iface;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalInt;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.netlink.Address;
import org.jflannel.linuxnet.netlink.Link;
import org.jflannel.linuxnet.netlink.Route;
import org.jflannel.linuxnet.netlink.RtNetlink;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** Reads the {@link NetSnapshot} interface selection needs from the kernel (links, addresses, main-table default routes). */
public final class RtNetlinkSnapshot {
    private static final Logger LOG = LoggerFactory.getLogger(RtNetlinkSnapshot.class);
    static final int AF_INET = 2;
    static final int AF_INET6 = 10;
    static final int IFA_F_TEMPORARY = 0x01;
    static final int IFA_F_DEPRECATED = 0x20;
    static final int IFA_F_PERMANENT = 0x80;

    private RtNetlinkSnapshot() {
    }

    public static NetSnapshot read(RtNetlink nl) throws NetlinkException {
        List<NetSnapshot.Iface> ifaces = new ArrayList<>();
        for (Link link : nl.links()) {
            List<NetSnapshot.Addr> addrs = new ArrayList<>();
            for (Address a : nl.addresses(link.index())) {
                int f = a.flags();
                addrs.add(new NetSnapshot.Addr(a.prefix().address(), a.prefix().prefixLength(), a.scope(),
                        (f & IFA_F_PERMANENT) != 0, (f & IFA_F_DEPRECATED) != 0, (f & IFA_F_TEMPORARY) != 0));
            }
            ifaces.add(new NetSnapshot.Iface(link.index(), link.name(), link.mtu(), link.flags(), addrs));
        }
        ifaces.sort((a, b) -> Integer.compare(a.index(), b.index()));
        List<NetSnapshot.DefaultRoute> defaults = new ArrayList<>();
        for (int family : new int[] {AF_INET, AF_INET6}) {
            for (Route r : nl.routes(family, Route.TABLE_MAIN)) {
                if (r.dst() == null || r.dst().prefixLength() == 0) {
                    defaults.add(new NetSnapshot.DefaultRoute(family == AF_INET6, r.linkIndex()));
                }
            }
        }
        return new NetSnapshot(ifaces, defaults);
    }

    /** {@code ip route get <ip>}: the output interface, empty when the kernel has no route. */
    public static OptionalInt routeGet(RtNetlink nl, InetAddress ip) {
        try {
            return nl.routeGet(ip).stream().mapToInt(Route::linkIndex).filter(i -> i > 0).findFirst();
        } catch (NetlinkException e) {
            LOG.info("route lookup failed ip={} error={}", IpLiteral.format(ip), e.getMessage());
            return OptionalInt.empty();
        }
    }
}
