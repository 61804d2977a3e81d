package org.jflannel.core.peers;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.Executor;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseEvent;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The one loop every backend with per-peer kernel state runs: <b>plan</b> each lease into entries
 * ({@link PeerKernel#plan}), <b>apply</b> them (stale entries of a changed lease deleted first, then the new
 * ones written), <b>remember</b> what is programmed and what failed, and <b>heal</b>: a reconcile pass
 * reads the kernel back, repairs what is absent or wrong, removes strays once the first complete lease
 * list is known, and replays everything when the device was re-created ({@link Healing} runs the passes
 * on netlink events and a timer). The backend supplies only its kernel side ({@link PeerKernel}).
 *
 * <p>Runs on the daemon's single {@code lease-events} thread (apply, reconcile), so nothing is locked;
 * {@link #close()} and {@link #closed()} may be called from any thread.
 */
public final class PeerLoop<E> implements Healing.Target {
    private static final Logger LOG = LoggerFactory.getLogger(PeerLoop.class);
    /** From this many added leases in one batch on, per-peer lines go to DEBUG, one summary line to INFO, writes may be pipelined. */
    public static final int BULK_MIN = 8;

    private final String name;
    private final Lease own;
    private final PeerKernel<E> kernel;
    private final LoopCounters counters;
    /** Lease key → its plan as last applied. */
    private final Map<String, LeasePlan.Planned<E>> programmed = new LinkedHashMap<>();
    /** Entries whose last write failed: retried by full passes only, so their rollbacks (netlink events too) cannot loop. */
    private final Set<E> failing = new HashSet<>();
    /** Entries of the current batch waiting to be written; written before any delete, and at the end. */
    private final List<E> pending = new ArrayList<>();
    private boolean bulk;
    private boolean firstBatch;
    private boolean snapshotSeen;
    private Healing healing;
    private volatile boolean closed;

    /** @param name the backend, for log lines ({@code vxlan entries replayed …}) */
    public PeerLoop(String name, Lease own, PeerKernel<E> kernel, LoopCounters counters) {
        this.name = name;
        this.own = own;
        this.kernel = kernel;
        this.counters = counters;
    }

    /** Starts the backend's watch of what concerns its entries (a netlink monitor) on the healing it is given. */
    @FunctionalInterface
    public interface Watch<X extends Exception> {
        AutoCloseable start(Healing healing) throws X;
    }

    /**
     * Starts healing this loop: a {@link Healing} on a timer thread of its own ({@code timerThread}), fed by the
     * backend's {@code watch}; both stop with {@link #close()}.
     *
     * @param leaseEvents runs a task on the daemon's {@code lease-events} thread
     */
    public <X extends Exception> void heal(Executor leaseEvents, HealTiming timing, String timerThread, Watch<X> watch) throws X {
        healWith(new Healing(name, this, leaseEvents, timing, Healing.thread(timerThread)));
        boolean started = false;
        try {
            healing.start(watch.start(healing));
            started = true;
        } finally {
            if (!started) {
                healing.close();
            }
        }
    }

    /** The healing that runs this loop's passes; told when a device re-creation failed or worked. */
    void healWith(Healing h) {
        this.healing = h;
    }

    /** Programs added leases and removes removed ones; one bad lease never blocks the others. */
    public void apply(List<LeaseEvent> batch) {
        boolean first = !snapshotSeen;
        long start = System.nanoTime();
        long adds = batch.stream().filter(e -> e.type() == LeaseEvent.Type.ADDED).count();
        bulk = adds >= BULK_MIN;
        firstBatch = first;
        try {
            for (LeaseEvent event : batch) {
                if (closed || Thread.currentThread().isInterrupted()) {
                    return;
                }
                try {
                    if (event.type() == LeaseEvent.Type.ADDED) {
                        added(event.lease());
                    } else {
                        flush(); // a removal may concern an entry still waiting to be written
                        removed(event.lease());
                    }
                } catch (RuntimeException e) {
                    counters.leaseSkipped();
                    LOG.error("lease failed lease={} error={}", event.lease().key(), e.toString());
                }
            }
            flush();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        } finally {
            pending.clear();
            bulk = false;
            firstBatch = false;
        }
        if (adds >= BULK_MIN) {
            // one line for the batch; the per-peer lines are at DEBUG (thousands of peers at start-up)
            LOG.info("leases applied events={} added={} peers={} failing={} ms={}", batch.size(), adds,
                    programmed.size(), failing.size(), (System.nanoTime() - start) / 1_000_000);
        }
        snapshotSeen = true;
        if (first) {
            reconcile(true); // the first batch is the complete list: entries of vanished peers go now (issue #2554)
        }
    }

    private void added(Lease lease) throws InterruptedException {
        if (lease.sameSubnets(own)) {
            return;
        }
        LeasePlan<E> outcome = kernel.plan(lease);
        LeasePlan.Planned<E> old = programmed.remove(lease.key());
        if (old != null) {
            flush(); // the old entries may still be waiting to be written
        }
        if (outcome instanceof LeasePlan.Skipped<E> s) {
            if (s.counted()) {
                counters.leaseSkipped();
            }
            LOG.warn("{} lease={}", s.reason(), lease.key());
            if (old != null) {
                retire(old.entries(), List.of());
            }
            return;
        }
        LeasePlan.Planned<E> plan = (LeasePlan.Planned<E>) outcome;
        for (String refusal : plan.refusals()) {
            counters.leaseSkipped();
            LOG.warn("peer refused lease={} {}", lease.key(), refusal);
        }
        if (old != null) {
            retire(old.entries(), plan.entries()); // the peer changed address or MAC: its old entries go first
        }
        programmed.put(plan.key(), plan);
        for (E e : plan.entries()) {
            if (!bulk) {
                LOG.info("lease added {}", kernel.describe(e));
            } else if (LOG.isDebugEnabled()) { // describe() builds a string: not for 20,000 peers unless asked
                LOG.debug("lease added {}", kernel.describe(e));
            }
            pending.add(e);
        }
    }

    private void removed(Lease lease) {
        LeasePlan.Planned<E> plan = programmed.remove(lease.key());
        List<E> entries = plan != null ? plan.entries() : kernel.forgotten(lease);
        for (E e : entries) {
            LOG.info("lease removed {}", kernel.describe(e));
        }
        delete(entries);
    }

    /** Writes the pending entries; what failed is remembered for the full passes. */
    private void flush() throws InterruptedException {
        if (pending.isEmpty()) {
            return;
        }
        List<E> batch = List.copyOf(pending);
        pending.clear();
        write(batch, new Writing<>(bulk, firstBatch, failing));
    }

    private void write(List<E> entries, Writing<E> how) throws InterruptedException {
        Set<E> failed = new HashSet<>(kernel.write(entries, how));
        for (E e : entries) {
            if (failed.contains(e)) {
                failing.add(e);
            } else {
                failing.remove(e);
            }
        }
    }

    /** A changed lease's stale entries: deleted, but those its new plan has too and those the kernel side keeps. */
    private void retire(List<E> stale, List<E> next) {
        for (E e : stale) {
            failing.remove(e);
            if (!next.contains(e) && !kernel.keepsOnChange(e, next)) {
                kernel.delete(e);
            }
        }
    }

    private void delete(List<E> entries) {
        for (E e : entries) {
            failing.remove(e);
            kernel.delete(e);
        }
    }

    /**
     * A reconcile pass (Ours, REFERENCE §6.10): brings back vanished devices (and replays every peer on
     * them), re-plans refused peers, repairs absent or wrong entries and, once the first complete lease
     * list was applied, removes strays.
     *
     * @param full false for a pass triggered by a netlink event: entries that failed to write and refused
     *             peers are then left to the full passes (the rollback of a failed write makes events too)
     */
    @Override
    public void reconcile(boolean full) {
        if (closed) {
            return;
        }
        try {
            switch (kernel.devices()) {
                case MISSING -> {
                    return;
                }
                case FAILED -> {
                    if (healing != null) {
                        healing.retryDeviceLater();
                    }
                    return;
                }
                case RENEWED -> {
                    if (healing != null) {
                        healing.resetBackoff();
                    }
                    replay();
                }
                case READY -> {
                }
            }
            if (full) {
                replanRefused();
            }
            ReadBack<E> back = kernel.readBack(desired(), snapshotSeen);
            int repairs = back.fixed();
            for (Runnable stray : back.strays()) {
                stray.run();
                repairs++;
            }
            for (ReadBack.Missing<E> m : back.missing()) {
                boolean known = failing.contains(m.entry());
                if (known && !full) {
                    continue;
                }
                if (kernel.repair(m, known)) {
                    failing.remove(m.entry());
                    repairs += m.parts();
                } else {
                    failing.add(m.entry());
                }
            }
            counters.reconciled();
            if (repairs > 0) {
                counters.repaired(repairs);
                LOG.info("reconcile repaired entries={} peers={}", repairs, programmed.size());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException e) {
            counters.readFailed();
            LOG.error("reconcile failed error={}", e.getMessage());
        }
    }

    /** The entries of every programmed plan. */
    private List<E> desired() {
        List<E> out = new ArrayList<>();
        programmed.values().forEach(p -> out.addAll(p.entries()));
        return out;
    }

    /** After a device came back (new index): plan every peer again and write it all. */
    private void replay() throws InterruptedException {
        List<LeasePlan.Planned<E>> old = new ArrayList<>(programmed.values());
        programmed.clear();
        failing.clear();
        List<E> entries = new ArrayList<>();
        for (LeasePlan.Planned<E> p : old) {
            if (kernel.plan(p.lease()) instanceof LeasePlan.Planned<E> np) {
                programmed.put(np.key(), np);
                entries.addAll(np.entries());
            }
        }
        write(entries, new Writing<>(true, false, failing));
        LOG.info("{} entries replayed peers={} failing={}", name, programmed.size(), failing.size());
    }

    /** Peers refused earlier may be accepted now (an address or a route added): plan them again. */
    private void replanRefused() {
        List<LeasePlan.Planned<E>> refused = programmed.values().stream().filter(p -> !p.refusals().isEmpty()).toList();
        for (LeasePlan.Planned<E> p : refused) {
            if (kernel.plan(p.lease()) instanceof LeasePlan.Planned<E> np && !np.entries().equals(p.entries())) {
                programmed.put(np.key(), np); // the pass writes the new entries as missing ones
                np.entries().stream().filter(e -> !p.entries().contains(e))
                        .forEach(e -> LOG.info("peer accepted {}", kernel.describe(e)));
            }
        }
    }

    /** The plans as last applied (lease-events thread). */
    public Collection<LeasePlan.Planned<E>> programmed() {
        return java.util.Collections.unmodifiableCollection(programmed.values());
    }

    /** Number of peers with at least one programmed entry (lease-events thread). */
    public int peers() {
        return (int) programmed.values().stream().filter(p -> !p.entries().isEmpty()).count();
    }

    /** Number of entries whose last write failed (lease-events thread). */
    public int failing() {
        return failing.size();
    }

    /** Stops applying and reconciling; the kernel entries stay in place (REFERENCE §9.4). */
    public void close() {
        closed = true;
        if (healing != null) {
            healing.close();
        }
    }

    @Override
    public boolean closed() {
        return closed;
    }
}
