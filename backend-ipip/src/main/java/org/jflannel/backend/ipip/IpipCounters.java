package org.jflannel.backend.ipip;

import org.jflannel.core.peers.PeerCounters;

/**
 * Counters for the daemon's metrics; ipip's kernel entries are routes, one per peer, and its device.
 * Written on the lease-events thread, read from any thread.
 */
public final class IpipCounters extends PeerCounters<IpipCounters.ErrorKind> {

    /** What failed: a route write or delete, a dump, the device's re-creation, a lease that could not be planned. */
    public enum ErrorKind { ROUTE, DUMP, DEVICE, LEASE_SKIPPED }

    IpipCounters() {
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
