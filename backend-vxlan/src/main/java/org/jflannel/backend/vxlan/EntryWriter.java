package org.jflannel.backend.vxlan;

import java.io.IOException;
import org.jflannel.backend.vxlan.VxlanCounters.ErrorKind;
import org.jflannel.linuxnet.netlink.FdbEntry;
import org.jflannel.linuxnet.netlink.Neighbour;
import org.jflannel.linuxnet.netlink.Nexthop;
import org.jflannel.linuxnet.netlink.Route;
import org.jflannel.linuxnet.netlink.RtNetlink;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes and deletes one peer family's entries in upstream's order with upstream's retry and
 * rollback (REFERENCE §6.7, §6.8): neighbour, FDB, route, the route last so the kernel never ARPs
 * for the gateway; a failed step removes what the earlier steps wrote.
 */
final class EntryWriter {
    private static final Logger LOG = LoggerFactory.getLogger(EntryWriter.class);

    private final RtNetlink nl;
    private final Retry retry;
    private final VxlanCounters counters;

    EntryWriter(RtNetlink nl, Retry retry, VxlanCounters counters) {
        this.nl = nl;
        this.retry = retry;
        this.counters = counters;
    }

    /** Programs {@code e}; false (logged, counted) when a step failed after its retries. */
    boolean program(String subject, PeerEntries e) throws InterruptedException {
        return program(subject, e, retry);
    }

    /**
     * Programs {@code e} with one attempt per step: reconcile is itself the periodic retry, and must
     * not hold the lease-events thread for upstream's ~100 s of back-off per failing step.
     */
    boolean programOnce(String subject, PeerEntries e) throws InterruptedException {
        return program(subject, e, Retry.once());
    }

    private boolean program(String subject, PeerEntries e, Retry retry) throws InterruptedException {
        if (e instanceof PeerEntries.Direct d) {
            return step(subject, "direct route", ErrorKind.ROUTE, retry, () -> nl.replaceRoute(d.route()));
        }
        PeerEntries.Encapsulated v = (PeerEntries.Encapsulated) e;
        if (!step(subject, "neighbour", ErrorKind.NEIGHBOUR, retry, () -> nl.replaceNeighbour(v.neighbour()))) {
            return false;
        }
        if (!step(subject, "fdb", ErrorKind.FDB, retry, () -> nl.replaceFdb(v.fdb()))) {
            // upstream retries this clean-up for IPv4 but tries once for IPv6
            cleanUp(subject, "neighbour", e.ipv6() ? Retry.once() : retry, () -> nl.deleteNeighbour(v.neighbour()));
            return false;
        }
        Retry.KernelCall route = v.nexthop() == null ? () -> nl.replaceRoute(v.route()) : () -> {
            nl.replaceNexthop(v.nexthop());
            nl.replaceRoute(v.route());
        };
        if (!step(subject, "route", ErrorKind.ROUTE, retry, route)) {
            // upstream tries these once for IPv4 and retries them for IPv6
            Retry r = e.ipv6() ? retry : Retry.once();
            cleanUp(subject, "neighbour", r, () -> nl.deleteNeighbour(v.neighbour()));
            cleanUp(subject, "fdb", r, () -> nl.deleteFdb(v.fdb()));
            return false;
        }
        return true;
    }

    /** Deletes every entry of {@code e}, each attempted whatever happened to the others. */
    void remove(String subject, PeerEntries e) {
        if (e instanceof PeerEntries.Encapsulated v) {
            delete(subject, "neighbour", ErrorKind.NEIGHBOUR, () -> nl.deleteNeighbour(v.neighbour()));
            delete(subject, "fdb", ErrorKind.FDB, () -> nl.deleteFdb(v.fdb()));
        }
        delete(subject, "route", ErrorKind.ROUTE, () -> nl.deleteRoute(e.route()));
        if (e instanceof PeerEntries.Encapsulated v && v.nexthop() != null) {
            // upstream flanneld (a rolling upgrade back) may have replaced ours by a plain route: that one too
            Route plain = Route.onlink(v.route().dst(), v.nexthop().gateway(), v.nexthop().linkIndex());
            delete(subject, "plain route", ErrorKind.ROUTE, () -> nl.deleteRoute(plain));
            delete(subject, "nexthop", ErrorKind.ROUTE, () -> nl.deleteNexthop(v.nexthop().id()));
        }
    }

    void remove(String subject, Nexthop nh) {
        delete(subject, "nexthop", ErrorKind.ROUTE, () -> nl.deleteNexthop(nh.id()));
    }

    void remove(String subject, Neighbour n) {
        delete(subject, "neighbour", ErrorKind.NEIGHBOUR, () -> nl.deleteNeighbour(n));
    }

    void remove(String subject, FdbEntry f) {
        delete(subject, "fdb", ErrorKind.FDB, () -> nl.deleteFdb(f));
    }

    void remove(String subject, Route r) {
        delete(subject, "route", ErrorKind.ROUTE, () -> nl.deleteRoute(r));
    }

    private boolean step(String subject, String what, ErrorKind kind, Retry retry, Retry.KernelCall call)
            throws InterruptedException {
        try {
            retry.run(what + " " + subject, call);
            counters.programmed(1);
            return true;
        } catch (IOException ex) {
            counters.error(kind);
            LOG.error("{} add failed subnet={} error={}", what, subject, ex.getMessage());
            return false;
        }
    }

    private void cleanUp(String subject, String what, Retry r, Retry.KernelCall call) throws InterruptedException {
        try {
            r.run(what + " cleanup " + subject, call);
        } catch (IOException ex) {
            LOG.error("{} cleanup failed subnet={} error={}", what, subject, ex.getMessage());
        }
    }

    private void delete(String subject, String what, ErrorKind kind, Retry.KernelCall call) {
        try {
            call.run();
            counters.removed(1);
        } catch (IOException ex) {
            counters.error(kind);
            LOG.error("{} delete failed subnet={} error={}", what, subject, ex.getMessage());
        }
    }
}
