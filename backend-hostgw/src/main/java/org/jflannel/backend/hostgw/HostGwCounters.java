package org.jflannel.backend.hostgw;

import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.jflannel.core.peers.LoopCounters;

/** Counters for the daemon's metrics. Written on the lease-events thread, read from any thread. */
public final class HostGwCounters implements LoopCounters {

    /** What failed: a route write or delete, a dump, a lease that could not be planned. */
    public enum ErrorKind { ROUTE, DUMP, LEASE_SKIPPED }

    private final AtomicLong routesProgrammed = new AtomicLong();
    private final AtomicLong routesRemoved = new AtomicLong();
    private final AtomicLong repairs = new AtomicLong();
    private final AtomicLong reconciles = new AtomicLong();
    private final Map<ErrorKind, AtomicLong> errors = new EnumMap<>(ErrorKind.class);

    HostGwCounters() {
        for (ErrorKind k : ErrorKind.values()) {
            errors.put(k, new AtomicLong());
        }
    }

    /** Routes written successfully, repairs included. */
    public long routesProgrammed() {
        return routesProgrammed.get();
    }

    /** Routes deleted for removed leases or as strays. */
    public long routesRemoved() {
        return routesRemoved.get();
    }

    /** Routes that reconcile found missing, wrong or stray and fixed. */
    public long repairs() {
        return repairs.get();
    }

    /** Completed reconcile passes. */
    public long reconciles() {
        return reconciles.get();
    }

    public long errors(ErrorKind kind) {
        return errors.get(kind).get();
    }

    void programmed() {
        routesProgrammed.incrementAndGet();
    }

    void removed() {
        routesRemoved.incrementAndGet();
    }

    @Override
    public void repaired(int n) {
        repairs.addAndGet(n);
    }

    @Override
    public void reconciled() {
        reconciles.incrementAndGet();
    }

    void error(ErrorKind kind) {
        errors.get(kind).incrementAndGet();
    }

    @Override
    public void leaseSkipped() {
        error(ErrorKind.LEASE_SKIPPED);
    }

    @Override
    public void readFailed() {
        error(ErrorKind.DUMP);
    }
}
