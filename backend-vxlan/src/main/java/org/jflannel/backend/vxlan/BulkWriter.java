package org.jflannel.backend.vxlan;

import java.util.ArrayList;
import java.util.List;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.netlink.Batch;
import org.jflannel.linuxnet.netlink.BatchResult;
import org.jflannel.linuxnet.netlink.RtNetlink;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes many peers' VXLAN entries with pipelined requests, one round trip per window instead of
 * three per peer. Upstream's per-peer order and semantics hold (REFERENCE §6.7): first the neighbour
 * and FDB entry of every peer, then the routes of only the peers whose first two steps both worked,
 * so the route still comes last and never goes out for a peer without its neighbour and FDB entry.
 * Peers with a failed step come back to the caller for the per-peer path ({@link EntryWriter}: its
 * retries with back-off and its rollback), so behaviour on errors stays upstream's.
 */
final class BulkWriter {
    private static final Logger LOG = LoggerFactory.getLogger(BulkWriter.class);

    private final RtNetlink nl;
    private final VxlanCounters counters;

    BulkWriter(RtNetlink nl, VxlanCounters counters) {
        this.nl = nl;
        this.counters = counters;
    }

    /** Writes {@code entries}; returns those that did not get all three parts, in their order. */
    List<PeerEntries.Encapsulated> program(List<PeerEntries.Encapsulated> entries) {
        Batch pairs = nl.batch();
        for (PeerEntries.Encapsulated e : entries) {
            pairs.replaceNeighbour(e.neighbour());
            pairs.replaceFdb(e.fdb());
        }
        BatchResult first;
        try {
            first = pairs.execute();
        } catch (NetlinkException ex) {
            LOG.warn("pipelined write failed peers={} error={}", entries.size(), ex.getMessage());
            return entries;
        }
        List<PeerEntries.Encapsulated> failed = new ArrayList<>();
        List<PeerEntries.Encapsulated> routed = new ArrayList<>(entries.size());
        Batch routes = nl.batch();
        Batch cleanUp = nl.batch();
        for (int k = 0; k < entries.size(); k++) {
            int i = k;
            PeerEntries.Encapsulated e = entries.get(i);
            if (first.ok(2 * i) && first.ok(2 * i + 1)) {
                if (e.nexthop() != null) {
                    routes.replaceNexthop(e.nexthop()); // just before its route: a failed one fails the route too
                }
                routes.replaceRoute(e.route());
                routed.add(e);
                continue;
            }
            failed.add(e);
            NetlinkException why = first.error(2 * i).or(() -> first.error(2 * i + 1)).orElseThrow();
            LOG.info("peer entries failed, retrying per peer {} error={}", e.describe(), why.getMessage());
            if (!first.ok(2 * i) && first.ok(2 * i + 1)) {
                cleanUp.deleteFdb(e.fdb()); // upstream would not have written it: its neighbour step failed
            }
        }
        failed.addAll(writeRoutes(routes, routed));
        if (cleanUp.size() > 0) {
            try {
                cleanUp.execute().errors().forEach(ex -> LOG.error("fdb cleanup failed error={}", ex.getMessage()));
            } catch (NetlinkException ex) {
                LOG.error("fdb cleanup failed entries={} error={}", cleanUp.size(), ex.getMessage());
            }
        }
        return failed;
    }

    private List<PeerEntries.Encapsulated> writeRoutes(Batch routes, List<PeerEntries.Encapsulated> routed) {
        if (routed.isEmpty()) {
            return List.of();
        }
        BatchResult result;
        try {
            result = routes.execute();
        } catch (NetlinkException ex) {
            LOG.warn("pipelined route write failed peers={} error={}", routed.size(), ex.getMessage());
            return routed;
        }
        List<PeerEntries.Encapsulated> failed = new ArrayList<>();
        int done = 0;
        int at = 0; // request index: a peer with a nexthop object has two requests, the nexthop's first
        for (PeerEntries.Encapsulated e : routed) {
            int first = at;
            at += e.nexthop() != null ? 2 : 1;
            int last = at - 1;
            if (result.ok(last) && result.ok(first)) {
                done++;
            } else {
                failed.add(e);
                LOG.info("peer route failed, retrying per peer {} error={}", e.describe(),
                        result.error(first).or(() -> result.error(last)).orElseThrow().getMessage());
            }
        }
        counters.programmed(3 * done);
        return failed;
    }
}
