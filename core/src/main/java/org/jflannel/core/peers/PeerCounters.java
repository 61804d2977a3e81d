package org.jflannel.core.peers;

import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The counters of a backend on the {@link PeerLoop} (vxlan, host-gw), for the daemon's metrics: kernel
 * entries written and deleted, repairs, reconcile passes, and errors by the backend's own kinds. The
 * loop's lease skips and failed dumps land on two of those kinds. A backend's subclass names the
 * getters its callers read ({@code routesProgrammed}) and keeps the writers package-private, so only
 * the backend counts. Written on the lease-events thread, read from any thread.
 *
 * @param <K> the backend's error kinds
 */
public abstract class PeerCounters<K extends Enum<K>> implements LoopCounters {
    private final AtomicLong programmed = new AtomicLong();
    private final AtomicLong removed = new AtomicLong();
    private final AtomicLong repairs = new AtomicLong();
    private final AtomicLong reconciles = new AtomicLong();
    private final Map<K, AtomicLong> errors;
    private final K leaseSkipped;
    private final K dumpFailed;

    /**
     * @param leaseSkipped the kind a lease the loop could not plan or apply counts as
     * @param dumpFailed   the kind a reconcile pass that could not read the kernel counts as
     */
    protected PeerCounters(Class<K> kinds, K leaseSkipped, K dumpFailed) {
        this.errors = new EnumMap<>(kinds);
        for (K k : kinds.getEnumConstants()) {
            errors.put(k, new AtomicLong());
        }
        this.leaseSkipped = leaseSkipped;
        this.dumpFailed = dumpFailed;
    }

    /** Kernel entries written successfully, replays and repairs included. */
    public long entriesProgrammed() {
        return programmed.get();
    }

    /** Kernel entries deleted for removed leases or as strays. */
    public long entriesRemoved() {
        return removed.get();
    }

    /** Entries that reconcile found missing, wrong or stray and fixed. */
    public long repairs() {
        return repairs.get();
    }

    /** Completed reconcile passes. */
    public long reconciles() {
        return reconciles.get();
    }

    /** The backend's error kinds, in declaration order (the metrics' label values). */
    public List<K> errorKinds() {
        return List.copyOf(errors.keySet());
    }

    public long errors(K kind) {
        return errors.get(kind).get();
    }

    protected final void countProgrammed(int n) {
        programmed.addAndGet(n);
    }

    protected final void countRemoved(int n) {
        removed.addAndGet(n);
    }

    protected final void countError(K kind) {
        errors.get(kind).incrementAndGet();
    }

    @Override
    public final void repaired(int n) {
        repairs.addAndGet(n);
    }

    @Override
    public final void reconciled() {
        reconciles.incrementAndGet();
    }

    @Override
    public final void leaseSkipped() {
        countError(leaseSkipped);
    }

    @Override
    public final void readFailed() {
        countError(dumpFailed);
    }
}
