package org.jflannel.backend.vxlan;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jflannel.linuxnet.netlink.IpPrefix;
import org.jflannel.linuxnet.netlink.Route;
import org.jflannel.linuxnet.netlink.RtNetlink;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ours (REFERENCE §6.10): makes a VTEP's neighbour, FDB and route tables match the programmed plans —
 * dumps them, writes what is missing or wrong, deletes strays — and says how many parts it fixed.
 */
final class Reconciler {
    private static final Logger LOG = LoggerFactory.getLogger(Reconciler.class);

    private final RtNetlink nl;
    private final EntryWriter writer;
    private final Set<PeerEntries> failing;

    /** @param failing the network's set of entries whose last write failed; kept up to date here */
    Reconciler(RtNetlink nl, EntryWriter writer, Set<PeerEntries> failing) {
        this.nl = nl;
        this.writer = writer;
        this.failing = failing;
    }

    int device(VtepDevice dev, Collection<PeerPlan> plans, boolean withStrays, boolean retryFailing) throws IOException, InterruptedException {
        List<PeerEntries.Encapsulated> desired = new ArrayList<>();
        for (PeerPlan p : plans) {
            for (PeerEntries e : p.entries()) {
                if (e instanceof PeerEntries.Encapsulated enc && enc.route().linkIndex() == dev.index()) {
                    desired.add(enc);
                }
            }
        }
        int idx = dev.index();
        KernelDiff diff = KernelDiff.of(desired, nl.neighbours(idx), nl.fdb(idx), nl.routesOf(idx), withStrays);
        for (var n : diff.strayNeighbours()) {
            LOG.info("stray neighbour removed dev={} ip={} mac={}", dev.name(), n.ip().getHostAddress(), n.mac());
            writer.remove(n.ip().getHostAddress(), n);
        }
        for (var f : diff.strayFdb()) {
            LOG.info("stray fdb removed dev={} mac={} dst={}", dev.name(), f.mac(), f.dst().getHostAddress());
            writer.remove(f.dst().getHostAddress(), f);
        }
        for (var r : diff.strayRoutes()) {
            LOG.info("stray route removed dev={} dst={} via={}", dev.name(), r.dst(), r.gateway().getHostAddress());
            writer.remove(r.dst().toString(), r);
        }
        int repairs = diff.strays();
        for (KernelDiff.Missing m : diff.missing()) {
            if (retryFailing || !failing.contains(m.entries())) {
                LOG.info("entry repaired {} parts={}", m.entries().describe(), m.parts());
                repairs += repair(m.entries(), m.parts());
            }
        }
        return repairs;
    }

    int direct(Collection<PeerPlan> plans, boolean retryFailing) throws IOException, InterruptedException {
        int repairs = 0;
        Map<IpPrefix, List<Route>> main = null; // by destination: one scan per peer was O(peers x routes)
        for (PeerPlan p : plans) {
            for (PeerEntries e : p.entries()) {
                if (e instanceof PeerEntries.Direct d) {
                    if (main == null) {
                        main = new HashMap<>();
                        for (Route r : nl.routes(0, Route.TABLE_MAIN)) {
                            if (r.dst() != null) {
                                main.computeIfAbsent(r.dst(), k -> new ArrayList<>(1)).add(r);
                            }
                        }
                    }
                    if ((retryFailing || !failing.contains(d)) && main.getOrDefault(d.route().dst(), List.of()).stream()
                            .noneMatch(r -> KernelDiff.sameRoute(r, d.route()))) {
                        LOG.info("entry repaired {}", e.describe());
                        repairs += repair(d, 1);
                    }
                }
            }
        }
        return repairs;
    }

    /** One attempt; counts {@code parts} repairs only when it worked. */
    private int repair(PeerEntries e, int parts) throws InterruptedException {
        if (writer.programOnce(e.route().dst().toString(), e)) {
            failing.remove(e);
            return parts;
        }
        failing.add(e);
        return 0;
    }
}
