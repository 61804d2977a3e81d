package org.jflannel.backend.vxlan;

import java.util.concurrent.atomic.AtomicLong;
import org.jflannel.core.peers.PeerCounters;

/**
 * Counters for the daemon's metrics: the loop's (entries, repairs, reconciles, errors) and the
 * device re-creations that are this backend's own. Written on the lease-events thread, read from any thread.
 */
public final class VxlanCounters extends PeerCounters<VxlanCounters.ErrorKind> {

    /** What failed. */
    public enum ErrorKind { NEIGHBOUR, FDB, ROUTE, DEVICE, DUMP, LEASE_SKIPPED }

    private final AtomicLong deviceRecreations = new AtomicLong();

    VxlanCounters() {
        super(ErrorKind.class, ErrorKind.LEASE_SKIPPED, ErrorKind.DUMP);
    }

    /** Times a vanished VXLAN device was created again. */
    public long deviceRecreations() {
        return deviceRecreations.get();
    }

    /** {@code n} kernel entries (neighbour, FDB, route) written. */
    void programmed(int n) {
        countProgrammed(n);
    }

    void removed(int n) {
        countRemoved(n);
    }

    void recreated() {
        deviceRecreations.incrementAndGet();
    }

    void error(ErrorKind kind) {
        countError(kind);
    }
}
