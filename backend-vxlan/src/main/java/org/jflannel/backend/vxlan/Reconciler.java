package org.jflannel.backend.vxlan;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jflannel.core.peers.ReadBack;
import org.jflannel.linuxnet.netlink.IpPrefix;
import org.jflannel.linuxnet.netlink.Route;
import org.jflannel.linuxnet.netlink.RtNetlink;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ours (REFERENCE §6.10): reads a VTEP's neighbour, FDB and route tables (and the main table for direct
 * routes) back against the wanted entries: which are absent or wrong, and the strays, each of which
 * deletes itself with a line when the loop runs it.
 */
final class Reconciler {
    private static final Logger LOG = LoggerFactory.getLogger(Reconciler.class);

    private final RtNetlink nl;
    private final EntryWriter writer;

    Reconciler(RtNetlink nl, EntryWriter writer) {
        this.nl = nl;
        this.writer = writer;
    }

    void device(VtepDevice dev, Collection<PeerEntries> wanted, boolean withStrays,
                List<ReadBack.Missing<PeerEntries>> missing, List<Runnable> strays) throws IOException {
        List<PeerEntries.Encapsulated> desired = new ArrayList<>();
        for (PeerEntries e : wanted) {
            if (e instanceof PeerEntries.Encapsulated enc && enc.route().linkIndex() == dev.index()) {
                desired.add(enc);
            }
        }
        int idx = dev.index();
        KernelDiff diff = KernelDiff.of(desired, nl.neighbours(idx), nl.fdb(idx), nl.routesOf(idx), nl.nexthops(idx),
                withStrays);
        fromDiff(dev, diff, missing, strays);
    }

    /** The missing entries and the strays of {@code diff} (of a dump of {@code dev}), as {@link #device} hands them on. */
    void fromDiff(VtepDevice dev, KernelDiff diff, List<ReadBack.Missing<PeerEntries>> missing, List<Runnable> strays) {
        for (var n : diff.strayNeighbours()) {
            strays.add(() -> {
                LOG.info("stray neighbour removed dev={} ip={} mac={}", dev.name(), n.ip().getHostAddress(), n.mac());
                writer.remove(n.ip().getHostAddress(), n);
            });
        }
        for (var f : diff.strayFdb()) {
            strays.add(() -> {
                LOG.info("stray fdb removed dev={} mac={} dst={}", dev.name(), f.mac(), f.dst().getHostAddress());
                writer.remove(f.dst().getHostAddress(), f);
            });
        }
        for (var r : diff.strayRoutes()) {
            strays.add(() -> {
                LOG.info("stray route removed dev={} dst={} via={}{}", dev.name(), r.dst(),
                        r.gateway() == null ? "-" : r.gateway().getHostAddress(),
                        r.nexthopId() == 0 ? "" : " nhid=" + Integer.toUnsignedString(r.nexthopId()));
                writer.remove(r.dst().toString(), r);
            });
        }
        for (var h : diff.strayNexthops()) {
            strays.add(() -> {
                LOG.info("stray nexthop removed dev={} id={} via={}", dev.name(), Integer.toUnsignedString(h.id()),
                        h.gateway().getHostAddress());
                writer.remove("nexthop " + Integer.toUnsignedString(h.id()), h);
            });
        }
        for (KernelDiff.Missing m : diff.missing()) {
            missing.add(new ReadBack.Missing<>(m.entries(), m.parts()));
        }
    }

    void direct(Collection<PeerEntries> wanted, List<ReadBack.Missing<PeerEntries>> missing) throws IOException {
        Map<IpPrefix, List<Route>> main = null; // by destination: one scan per peer was O(peers x routes)
        for (PeerEntries e : wanted) {
            if (e instanceof PeerEntries.Direct d) {
                if (main == null) {
                    main = new HashMap<>();
                    for (Route r : nl.routes(0, Route.TABLE_MAIN)) {
                        if (r.dst() != null) {
                            main.computeIfAbsent(r.dst(), k -> new ArrayList<>(1)).add(r);
                        }
                    }
                }
                if (main.getOrDefault(d.route().dst(), List.of()).stream().noneMatch(r -> KernelDiff.sameRoute(r, d.route()))) {
                    missing.add(new ReadBack.Missing<>(d, 1));
                }
            }
        }
    }
}
