package org.jflannel.backend.vxlan;

import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.jflannel.core.peers.LoopCounters;

/**
 * Counters for the daemon's metrics. Written on the lease-events thread, read from any thread.
 */
public final class VxlanCounters implements LoopCounters {

    /** What failed. */
    public enum ErrorKind { NEIGHBOUR, FDB, ROUTE, DEVICE, DUMP, LEASE_SKIPPED }

    private final AtomicLong entriesProgrammed = new AtomicLong();
    private final AtomicLong entriesRemoved = new AtomicLong();
    private final AtomicLong repairs = new AtomicLong();
    private final AtomicLong reconciles = new AtomicLong();
    private final AtomicLong deviceRecreations = new AtomicLong();
    private final Map<ErrorKind, AtomicLong> errors = new EnumMap<>(ErrorKind.class);

    VxlanCounters() {
        for (ErrorKind k : ErrorKind.values()) {
            errors.put(k, new AtomicLong());
        }
    }

    /** Kernel entries (neighbour, FDB, route) written successfully, replays and repairs included. */
    public long entriesProgrammed() {
        return entriesProgrammed.get();
    }

    /** Kernel entries deleted for removed leases or as strays. */
    public long entriesRemoved() {
        return entriesRemoved.get();
    }

    /** Entries that reconcile found missing, wrong or stray and fixed. */
    public long repairs() {
        return repairs.get();
    }

    /** Completed reconcile passes. */
    public long reconciles() {
        return reconciles.get();
    }

    /** Times a vanished VXLAN device was created again. */
    public long deviceRecreations() {
        return deviceRecreations.get();
    }

    public long errors(ErrorKind kind) {
        return errors.get(kind).get();
    }

    void programmed(int n) {
        entriesProgrammed.addAndGet(n);
    }

    void removed(int n) {
        entriesRemoved.addAndGet(n);
    }

    @Override
    public void repaired(int n) {
        repairs.addAndGet(n);
    }

    @Override
    public void reconciled() {
        reconciles.incrementAndGet();
    }

    void recreated() {
        deviceRecreations.incrementAndGet();
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
