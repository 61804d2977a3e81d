package org.jflannel.backend.vxlan;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import org.jflannel.linuxnet.Route;
import org.jflannel.linuxnet.RtNetlink;
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

    Reconciler(RtNetlink nl, EntryWriter writer) {
        this.nl = nl;
        this.writer = writer;
    }

    int device(VtepDevice dev, Collection<PeerPlan> plans, boolean withStrays) throws IOException, InterruptedException {
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
        for (PeerEntries e : diff.missing()) {
            LOG.info("entry repaired {}", e.describe());
            writer.program(e.route().dst().toString(), e);
        }
        return diff.wrongParts() + diff.strays();
    }

    int direct(Collection<PeerPlan> plans) throws IOException, InterruptedException {
        int repairs = 0;
        List<Route> main = null;
        for (PeerPlan p : plans) {
            for (PeerEntries e : p.entries()) {
                if (e instanceof PeerEntries.Direct d) {
                    if (main == null) {
                        main = nl.routes(0, Route.TABLE_MAIN);
                    }
                    if (main.stream().noneMatch(r -> KernelDiff.sameRoute(r, d.route()))) {
                        LOG.info("entry repaired {}", e.describe());
                        writer.program(d.route().dst().toString(), d);
                        repairs++;
                    }
                }
            }
        }
        return repairs;
    }
}
