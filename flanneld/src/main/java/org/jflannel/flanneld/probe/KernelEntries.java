package org.jflannel.flanneld.probe;

import java.io.IOException;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.jflannel.core.MacAddress;
import org.jflannel.linuxnet.netlink.FdbEntry;
import org.jflannel.linuxnet.netlink.Link;
import org.jflannel.linuxnet.netlink.Neighbour;
import org.jflannel.linuxnet.netlink.Route;
import org.jflannel.linuxnet.netlink.RtNetlink;

/**
 * One dump of the VXLAN device's neighbours, FDB entries and routes, indexed for per-peer lookups:
 * what /peers shows as "programmed entries" and what the stale-entries check compares with the
 * lease. Read from the kernel, not from the backend, so it shows what really is there.
 */
final class KernelEntries {
    private final Map<InetAddress, Neighbour> neighbours = new HashMap<>();
    private final Map<InetAddress, List<FdbEntry>> fdbByDst = new HashMap<>();
    private final Map<InetAddress, Route> routesByGateway = new HashMap<>();
    private final boolean present;

    KernelEntries(List<Neighbour> neighbours, List<FdbEntry> fdb, List<Route> routes, boolean present) {
        for (Neighbour n : neighbours) {
            this.neighbours.put(n.ip(), n);
        }
        for (FdbEntry f : fdb) {
            fdbByDst.computeIfAbsent(f.dst(), k -> new ArrayList<>(1)).add(f);
        }
        for (Route r : routes) {
            if (r.gateway() != null) {
                routesByGateway.put(r.gateway(), r);
            }
        }
        this.present = present;
    }

    static final KernelEntries NONE = new KernelEntries(List.of(), List.of(), List.of(), false);

    /** Dumps {@code device} now; {@link #NONE} when it does not exist. */
    static KernelEntries dump(RtNetlink nl, String device) throws IOException {
        Optional<Link> link = nl.link(device);
        if (link.isEmpty()) {
            return NONE;
        }
        int i = link.get().index();
        return new KernelEntries(nl.neighbours(i), nl.fdb(i), nl.routesOf(i), true);
    }

    /** The peer's entries as the kernel holds them, for /peers. */
    PeerEntriesView of(PeerTarget t) {
        Neighbour n = neighbours.get(t.overlay());
        Route r = routesByGateway.get(t.overlay());
        List<String> fdb = fdbByDst.getOrDefault(t.underlay(), List.of()).stream()
                .map(f -> f.mac() + " dst " + f.dst().getHostAddress()).toList();
        return new PeerEntriesView(n == null || n.mac() == null ? null : n.mac().toString(), fdb,
                r == null ? null : r.dst() + " via " + r.gateway().getHostAddress() + (r.onlink() ? " onlink" : ""));
    }

    /**
     * Why our entries for {@code t} disagree with its lease, or empty when they agree or cannot be
     * judged (no VTEP MAC in the lease; no entries at all, e.g. DirectRouting to a peer on our L2).
     */
    Optional<String> staleness(PeerTarget t) {
        MacAddress want = t.vtepMac();
        if (!present || want == null) {
            return Optional.empty();
        }
        Neighbour n = neighbours.get(t.overlay());
        List<FdbEntry> fdb = fdbByDst.getOrDefault(t.underlay(), List.of());
        if (n != null && n.mac() != null && !n.mac().equals(want)) {
            return Optional.of("neighbour " + t.overlay().getHostAddress() + " has " + n.mac() + ", lease says " + want);
        }
        for (FdbEntry f : fdb) {
            if (!f.mac().equals(want)) {
                return Optional.of("fdb to " + t.underlay().getHostAddress() + " has " + f.mac() + ", lease says " + want);
            }
        }
        if (n != null && fdb.isEmpty()) {
            return Optional.of("no fdb entry for " + want + " to " + t.underlay().getHostAddress());
        }
        return Optional.empty();
    }

    /** A peer's entries as /peers shows them; null parts are absent. */
    record PeerEntriesView(String neighbourMac, List<String> fdb, String route) {
        PeerEntriesView {
            fdb = List.copyOf(fdb);
        }
    }
}
