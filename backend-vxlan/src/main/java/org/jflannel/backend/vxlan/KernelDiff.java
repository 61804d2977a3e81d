package org.jflannel.backend.vxlan;

import java.net.InetAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jflannel.linuxnet.netlink.FdbEntry;
import org.jflannel.linuxnet.netlink.IpPrefix;
import org.jflannel.linuxnet.netlink.Neighbour;
import org.jflannel.linuxnet.netlink.Nexthop;
import org.jflannel.linuxnet.netlink.Route;

/**
 * Pure: compares the entries one VTEP should carry with what a dump of it shows (REFERENCE §6.10,
 * Ours). Missing or wrong entries name the peer entries to write again (replace is idempotent);
 * strays are entries of the kind flannel writes that belong to no current lease. Kernel-made
 * entries (proto kernel routes, non-permanent neighbours, the all-zero FDB default) are left alone.
 *
 * @param missing         peer entries of which at least one part is absent or wrong
 */
record KernelDiff(List<Missing> missing, List<Neighbour> strayNeighbours, List<FdbEntry> strayFdb,
                  List<Route> strayRoutes, List<Nexthop> strayNexthops) {
    static final int RTPROT_KERNEL = 2;

    /** A peer's entries with {@code parts} (1..3 of neighbour, FDB entry, route) absent or wrong. */
    record Missing(PeerEntries entries, int parts) {}

    /** How many parts are absent or wrong in all. */
    int wrongParts() {
        return missing.stream().mapToInt(Missing::parts).sum();
    }

    KernelDiff {
        missing = List.copyOf(missing);
        strayNeighbours = List.copyOf(strayNeighbours);
        strayFdb = List.copyOf(strayFdb);
        strayRoutes = List.copyOf(strayRoutes);
        strayNexthops = List.copyOf(strayNexthops);
    }

    int strays() {
        return strayNeighbours.size() + strayFdb.size() + strayRoutes.size() + strayNexthops.size();
    }

    static KernelDiff of(List<PeerEntries.Encapsulated> desired, List<Neighbour> neighbours, List<FdbEntry> fdb,
                         List<Route> routes, boolean withStrays) {
        return of(desired, neighbours, fdb, routes, List.of(), withStrays);
    }

    /**
     * @param desired       the encapsulated entries on this device
     * @param nexthops      the nexthop objects on this device: a route through one counts as present only when
     *                      the object is as wanted; those no peer wants are strays (nothing but flannel puts
     *                      nexthops on its VTEP)
     * @param withStrays    false until the first complete lease list is known: nothing is a stray yet
     */
    static KernelDiff of(List<PeerEntries.Encapsulated> desired, List<Neighbour> neighbours, List<FdbEntry> fdb,
                         List<Route> routes, List<Nexthop> nexthops, boolean withStrays) {
        List<Missing> missing = new ArrayList<>();
        // indexed once: comparing every desired entry with every dumped one was O(N^2) (4 million
        // comparisons per table at 2,000 peers, 400 million at 20,000)
        Map<InetAddress, List<Neighbour>> neighByIp = new HashMap<>();
        neighbours.forEach(n -> neighByIp.computeIfAbsent(n.ip(), k -> new ArrayList<>(1)).add(n));
        Set<FdbEntry> haveFdb = new HashSet<>(fdb);
        Map<IpPrefix, List<Route>> routesByDst = new HashMap<>();
        routes.stream().filter(r -> r.dst() != null)
                .forEach(r -> routesByDst.computeIfAbsent(r.dst(), k -> new ArrayList<>(1)).add(r));
        Set<InetAddress> wantedIps = new HashSet<>();
        Set<FdbEntry> wantedFdb = new HashSet<>();
        Set<IpPrefix> wantedDst = new HashSet<>();
        Set<Nexthop> haveNexthops = new HashSet<>(nexthops);
        Set<Integer> wantedNexthops = new HashSet<>();
        for (PeerEntries.Encapsulated e : desired) {
            wantedIps.add(e.neighbour().ip());
            wantedFdb.add(e.fdb());
            wantedDst.add(e.route().dst());
            if (e.nexthop() != null) {
                wantedNexthops.add(e.nexthop().id());
            }
            int parts = (neighByIp.getOrDefault(e.neighbour().ip(), List.of()).stream()
                    .anyMatch(n -> sameNeighbour(n, e.neighbour())) ? 0 : 1)
                    + (haveFdb.contains(e.fdb()) ? 0 : 1)
                    + (routesByDst.getOrDefault(e.route().dst(), List.of()).stream()
                    .anyMatch(r -> sameRoute(r, e.route()))
                    && (e.nexthop() == null || haveNexthops.contains(e.nexthop())) ? 0 : 1);
            if (parts > 0) {
                missing.add(new Missing(e, parts));
            }
        }
        if (!withStrays) {
            return new KernelDiff(missing, List.of(), List.of(), List.of(), List.of());
        }
        List<Neighbour> strayN = neighbours.stream()
                .filter(n -> (n.state() & Neighbour.NUD_PERMANENT) != 0 && !wantedIps.contains(n.ip())).toList();
        List<FdbEntry> strayF = fdb.stream()
                .filter(f -> f.mac().value() != 0 && !wantedFdb.contains(f)).toList();
        List<Route> strayR = routes.stream()
                .filter(r -> r.protocol() != RTPROT_KERNEL && (r.gateway() != null || r.nexthopId() != 0)
                        && r.dst() != null && !wantedDst.contains(r.dst()))
                .toList();
        List<Nexthop> strayH = nexthops.stream().filter(h -> !wantedNexthops.contains(h.id())).toList();
        return new KernelDiff(missing, strayN, strayF, strayR, strayH);
    }

    static boolean sameNeighbour(Neighbour have, Neighbour want) {
        return have.linkIndex() == want.linkIndex() && have.ip().equals(want.ip()) && want.mac().equals(have.mac())
                && (have.state() & Neighbour.NUD_PERMANENT) != 0;
    }

    /**
     * Through a nexthop object: the same id (gateway and device are the object's, compared by the caller; a kernel
     * with net.ipv4.nexthop_compat_mode=0 does not report them on the route). Plain: the same gateway and device,
     * and no nexthop object (one left from a run with nexthops on is written again as a plain route).
     */
    static boolean sameRoute(Route have, Route want) {
        if (want.nexthopId() != 0) {
            return want.dst().equals(have.dst()) && have.nexthopId() == want.nexthopId() && have.table() == want.table()
                    && have.type() == want.type();
        }
        return have.nexthopId() == 0 && want.dst().equals(have.dst()) && want.gateway().equals(have.gateway())
                && (want.linkIndex() == 0 || have.linkIndex() == want.linkIndex())
                && have.onlink() == want.onlink() && have.table() == want.table() && have.type() == want.type();
    }
}
