package org.jflannel.backend.vxlan;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import org.jflannel.core.Ip4Net;
import org.jflannel.core.Ip6Net;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseAttrs;
import org.jflannel.core.MacAddress;
import org.jflannel.linuxnet.netlink.FdbEntry;
import org.jflannel.linuxnet.netlink.IpPrefix;
import org.jflannel.linuxnet.netlink.Neighbour;
import org.jflannel.linuxnet.netlink.Nexthop;
import org.jflannel.linuxnet.netlink.Route;

/**
 * Pure: turns a peer lease into the kernel entries it needs (REFERENCE §6.7, §6.9). The only
 * outside fact, whether a public IP is on our L2, comes in as a predicate so this stays testable.
 */
final class PeerPlanner {

    /** Either a plan or the reason the lease is skipped (upstream's warning text). */
    sealed interface Outcome permits Planned, Skipped {}

    record Planned(PeerPlan plan) implements Outcome {}

    record Skipped(String reason) implements Outcome {}

    private final int v4Link;
    private final int v6Link;
    private final boolean directRouting;
    private final Predicate<InetAddress> sameL2;
    private final boolean nexthops;

    PeerPlanner(int v4Link, int v6Link, boolean directRouting, Predicate<InetAddress> sameL2) {
        this(v4Link, v6Link, directRouting, sameL2, false);
    }

    /**
     * @param v4Link        index of {@code flannel.<VNI>}, 0 when IPv4 is off
     * @param v6Link        index of {@code flannel-v6.<VNI>}, 0 when IPv6 is off
     * @param sameL2        {@code ip route get <ip>} gives one route without gateway (asked only with DirectRouting)
     * @param nexthops      IPv4 onlink routes through nexthop objects ({@link #nexthopId})
     */
    PeerPlanner(int v4Link, int v6Link, boolean directRouting, Predicate<InetAddress> sameL2, boolean nexthops) {
        this.v4Link = v4Link;
        this.v6Link = v6Link;
        this.directRouting = directRouting;
        this.sameL2 = sameL2;
        this.nexthops = nexthops;
    }

    /**
     * The nexthop id of a peer's IPv4 gateway: the address read as an unsigned number (10.244.3.0 →
     * 183763712). Gateways are unique per lease, so ids are too, and the same peer gets the same id after a
     * restart without any table; 0 (0.0.0.0, never a subnet address) means none.
     */
    static int nexthopId(Inet4Address gateway) {
        byte[] b = gateway.getAddress();
        return (b[0] & 0xff) << 24 | (b[1] & 0xff) << 16 | (b[2] & 0xff) << 8 | (b[3] & 0xff);
    }

    Outcome plan(Lease lease) {
        LeaseAttrs attrs = lease.attrs();
        if (!"vxlan".equals(attrs.backendType())) {
            return new Skipped("ignoring non-vxlan v4Subnet(" + text(lease.subnet()) + ") v6Subnet("
                    + text(lease.ipv6Subnet()) + "): type=" + attrs.backendType());
        }
        List<PeerEntries> entries = new ArrayList<>(2);
        if (lease.enableIPv4() && v4Link > 0) {
            VxlanBackendData data;
            try {
                data = VxlanBackendData.parse(attrs.backendData());
            } catch (IllegalArgumentException e) {
                return new Skipped("error decoding subnet lease JSON: " + e.getMessage());
            }
            if (attrs.publicIp() == null) {
                return new Skipped("lease has an IPv4 subnet but no public IP");
            }
            Ip4Net sn = lease.subnet();
            entries.add(family(new IpPrefix(sn.inetAddress(), sn.prefixLength()), attrs.publicIp(), data.vtepMac(), v4Link));
        }
        if (lease.enableIPv6() && v6Link > 0) {
            VxlanBackendData data;
            try {
                data = VxlanBackendData.parse(attrs.backendV6Data());
            } catch (IllegalArgumentException e) {
                return new Skipped("error decoding v6 subnet lease JSON: " + e.getMessage());
            }
            if (attrs.publicIpv6() == null) {
                return new Skipped("lease has an IPv6 subnet but no public IPv6");
            }
            Ip6Net sn = lease.ipv6Subnet();
            entries.add(family(new IpPrefix(sn.inetAddress(), sn.prefixLength()), attrs.publicIpv6(), data.vtepMac(), v6Link));
        }
        return new Planned(new PeerPlan(lease, entries));
    }

    private PeerEntries family(IpPrefix subnet, InetAddress publicIp, MacAddress vtepMac, int link) {
        if (directRouting && sameL2.test(publicIp)) {
            return new PeerEntries.Direct(Route.via(subnet, publicIp));
        }
        InetAddress gateway = subnet.address();
        Neighbour neighbour = Neighbour.permanent(link, gateway, vtepMac);
        FdbEntry fdb = new FdbEntry(link, vtepMac, publicIp);
        // IPv4 only: its routes are what hash into one fib_info bucket (docs/benchmarks.md); IPv6 keeps no such table
        if (nexthops && gateway instanceof Inet4Address v4gw && nexthopId(v4gw) != 0) {
            Nexthop nh = Nexthop.onlink(nexthopId(v4gw), gateway, link);
            return new PeerEntries.Encapsulated(neighbour, fdb, Route.through(subnet, nh), nh);
        }
        return new PeerEntries.Encapsulated(neighbour, fdb, Route.onlink(subnet, gateway, link));
    }

    private static String text(Object subnet) {
        return subnet == null ? "<nil>" : subnet.toString();
    }
}
