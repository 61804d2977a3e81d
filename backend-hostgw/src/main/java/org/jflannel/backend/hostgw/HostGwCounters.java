package org.jflannel.backend.hostgw;

import org.jflannel.core.peers.PeerCounters;

/**
 * Counters for the daemon's metrics; host-gw's kernel entries are routes, one per peer. Written on
 * the lease-events thread, read from any thread.
 */
public final class HostGwCounters extends PeerCounters<HostGwCounters.ErrorKind> {

    /** What failed: a route write or delete, a dump, a lease that could not be planned. */
    public enum ErrorKind { ROUTE, DUMP, LEASE_SKIPPED }

    HostGwCounters() {
        super(ErrorKind.class, ErrorKind.LEASE_SKIPPED, ErrorKind.DUMP);
    }

    /** Routes written successfully, repairs included. */
    public long routesProgrammed() {
        return entriesProgrammed();
    }

    /** Routes deleted for removed leases or as strays. */
    public long routesRemoved() {
        return entriesRemoved();
    }

    void programmed() {
        countProgrammed(1);
    }

    void removed() {
        countRemoved(1);
    }

    void error(ErrorKind kind) {
        countError(kind);
    }
}
