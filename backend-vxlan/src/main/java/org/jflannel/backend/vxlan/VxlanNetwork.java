package org.jflannel.backend.vxlan;

import java.io.IOException;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.Set;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jflannel.backend.vxlan.VxlanCounters.ErrorKind;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseEvent;
import org.jflannel.core.Network;
import org.jflannel.linuxnet.netlink.Route;
import org.jflannel.linuxnet.netlink.RtNetlink;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The registered VXLAN network: the peers' neighbour, FDB and route entries on our VTEP(s). Every
 * method except {@link #close()} and the counters runs on the daemon's {@code lease-events} thread
 * (netlink events and timers hand their work to it through {@link SelfHealing}), so nothing here
 * is locked.
 */
public final class VxlanNetwork implements Network {
    private static final Logger LOG = LoggerFactory.getLogger(VxlanNetwork.class);
    /** From this many added leases in one batch on, their entries are pipelined ({@link BulkWriter}). */
    static final int BULK_MIN = 8;

    private final Lease own;
    private final int mtu;
    private final RtNetlink nl;
    private final VtepDevice v4;
    private final VtepDevice v6;
    private final boolean directRouting;
    private final EntryWriter writer;
    private final BulkWriter bulk;
    /** Entries of the current batch waiting for one pipelined write; null when the batch is small. */
    private List<PeerEntries.Encapsulated> deferred;
    private final Reconciler reconciler;
    private final VxlanCounters counters;
    private final Map<String, PeerPlan> programmed = new LinkedHashMap<>();
    /** Entries whose last write failed: retried by full reconciles only, so their rollbacks cannot loop events. */
    private final Set<PeerEntries> failing = new HashSet<>();
    private SelfHealing healing;
    private boolean snapshotSeen;
    /** While the first batch is applied: entries already in the kernel exactly as wanted are not written again. */
    private boolean skipPresent;
    private volatile boolean closed;

    VxlanNetwork(Lease own, int mtu, RtNetlink nl, VtepDevice v4, VtepDevice v6, boolean directRouting,
                 Retry retry, VxlanCounters counters) {
        this.own = own;
        this.mtu = mtu;
        this.nl = nl;
        this.v4 = v4;
        this.v6 = v6;
        this.directRouting = directRouting;
        this.counters = counters;
        this.writer = new EntryWriter(nl, retry, counters);
        this.bulk = new BulkWriter(nl, counters);
        this.reconciler = new Reconciler(nl, writer, failing);
    }

    void startHealing(SelfHealing selfHealing) {
        this.healing = selfHealing;
    }

    @Override
    public Lease lease() {
        return own;
    }

    @Override
    public int mtu() {
        return mtu;
    }

    public VxlanCounters counters() {
        return counters;
    }

    /** Names of our devices, for the self-healing watcher. */
    List<VtepDevice> devices() {
        List<VtepDevice> out = new ArrayList<>(2);
        if (v4 != null) {
            out.add(v4);
        }
        if (v6 != null) {
            out.add(v6);
        }
        return out;
    }

    @Override
    public void apply(List<LeaseEvent> batch) {
        boolean first = !snapshotSeen;
        long start = System.nanoTime();
        long adds = batch.stream().filter(e -> e.type() == LeaseEvent.Type.ADDED).count();
        deferred = adds >= BULK_MIN ? new ArrayList<>((int) adds) : null;
        skipPresent = first;
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
                    counters.error(ErrorKind.LEASE_SKIPPED);
                    LOG.error("lease failed lease={} error={}", event.lease().key(), e.toString());
                }
            }
            flush();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        } finally {
            deferred = null;
            skipPresent = false;
        }
        if (adds >= BULK_MIN) {
            // one line for the batch; the per-peer lines are at DEBUG (thousands of peers at start-up)
            LOG.info("leases applied events={} added={} peers={} failing={} ms={}", batch.size(), adds,
                    programmed.size(), failing.size(), (System.nanoTime() - start) / 1_000_000);
        }
        snapshotSeen = true;
        if (first) {
            reconcile(); // the first batch is the complete list: entries of vanished peers go now (issue #2554)
        }
    }

    private void added(Lease lease) throws InterruptedException {
        if (lease.sameSubnets(own)) {
            return;
        }
        PeerPlanner.Outcome outcome = planner().plan(lease);
        PeerPlan old = programmed.remove(lease.key());
        if (old != null) {
            flush(); // the old entries may still be waiting to be written
        }
        if (outcome instanceof PeerPlanner.Skipped s) {
            counters.error(ErrorKind.LEASE_SKIPPED);
            LOG.warn("{} lease={}", s.reason(), lease.key());
            if (old != null) {
                removeAll(old, List.of());
            }
            return;
        }
        PeerPlan plan = ((PeerPlanner.Planned) outcome).plan();
        if (old != null) {
            removeAll(old, plan.entries()); // the peer changed MAC or address: its old entries go
        }
        programmed.put(plan.key(), plan);
        for (PeerEntries e : plan.entries()) {
            if (deferred == null) {
                LOG.info("lease added {}", e.describe());
            } else if (LOG.isDebugEnabled()) { // describe() builds a string: not for 20,000 peers unless asked
                LOG.debug("lease added {}", e.describe());
            }
            if (deferred != null && e instanceof PeerEntries.Encapsulated enc) {
                deferred.add(enc);
            } else {
                write(e);
            }
        }
    }

    /** Writes the deferred entries pipelined; those that failed go through the per-peer path (retries, rollback). */
    private void flush() throws InterruptedException {
        if (deferred == null || deferred.isEmpty()) {
            return;
        }
        if (skipPresent) {
            skipPresent(deferred);
        }
        List<PeerEntries.Encapsulated> failed = deferred.isEmpty() ? List.of() : bulk.program(deferred);
        Set<PeerEntries> retry = new HashSet<>(failed);
        for (PeerEntries.Encapsulated e : deferred) {
            if (!retry.contains(e)) {
                failing.remove(e);
            }
        }
        deferred.clear();
        for (PeerEntries.Encapsulated e : failed) {
            write(e);
        }
    }

    /**
     * Ours (issue 23): drops from {@code entries} the peers whose neighbour, FDB entry and route are all already
     * in the kernel as wanted (one dump per table and device). After a restart the kernel still holds every
     * peer (§9.4), and re-writing 10,000 routes through the kernel's route insertion (quadratic on one device,
     * docs/benchmarks.md) took seconds for no change; on a fresh device the dumps are empty and cost nothing.
     * A failed dump keeps every entry (the write is idempotent).
     */
    private void skipPresent(List<PeerEntries.Encapsulated> entries) {
        int before = entries.size();
        for (VtepDevice dev : devices()) {
            int idx = dev.index();
            List<PeerEntries.Encapsulated> mine = entries.stream().filter(e -> e.neighbour().linkIndex() == idx).toList();
            if (mine.isEmpty()) {
                continue;
            }
            try {
                Set<PeerEntries> wrong = new HashSet<>();
                KernelDiff.of(mine, nl.neighbours(idx), nl.fdb(idx), nl.routesOf(idx), false).missing()
                        .forEach(m -> wrong.add(m.entries()));
                entries.removeIf(e -> e.neighbour().linkIndex() == idx && !wrong.contains(e));
            } catch (IOException e) {
                LOG.warn("kernel entries not read, writing all device={} error={}", dev.name(), e.getMessage());
            }
        }
        if (entries.size() < before) {
            LOG.info("peers already programmed, not written again peers={} toWrite={}", before - entries.size(), entries.size());
        }
    }

    private void removed(Lease lease) {
        PeerPlan plan = programmed.remove(lease.key());
        if (plan == null && planner().plan(lease) instanceof PeerPlanner.Planned p) {
            plan = p.plan(); // not programmed by us (e.g. skipped earlier): remove what it would have made
        }
        if (plan == null) {
            return;
        }
        for (PeerEntries e : plan.entries()) {
            LOG.info("lease removed {}", e.describe());
        }
        removeAll(plan, List.of());
    }

    private boolean write(PeerEntries e) throws InterruptedException {
        boolean ok = writer.program(e.route().dst().toString(), e);
        if (ok) {
            failing.remove(e);
        } else {
            failing.add(e);
        }
        return ok;
    }

    private void removeAll(PeerPlan plan, List<PeerEntries> keep) {
        for (PeerEntries e : plan.entries()) {
            failing.remove(e);
            if (!keep.contains(e)) {
                writer.remove(e.route().dst().toString(), e);
            }
        }
    }

    /**
     * Ours (REFERENCE §6.10): brings back vanished devices, then re-writes missing or wrong entries
     * and, once the first complete lease list was applied, deletes entries of no current lease.
     */
    @Override
    public void reconcile() {
        reconcile(true);
    }

    /**
     * @param retryFailing false for a reconcile triggered by a netlink event: entries that failed to
     *                     write are then left to the periodic one (their rollback deletions are events too)
     */
    void reconcile(boolean retryFailing) {
        if (closed) {
            return;
        }
        try {
            if (!ensureDevices()) {
                return;
            }
            int repairs = 0;
            for (VtepDevice dev : devices()) {
                repairs += dev.repairState();
                repairs += reconciler.device(dev, programmed.values(), snapshotSeen, retryFailing);
            }
            repairs += reconciler.direct(programmed.values(), retryFailing);
            counters.reconciled();
            if (repairs > 0) {
                counters.repaired(repairs);
                LOG.info("reconcile repaired entries={} peers={}", repairs, programmed.size());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (IOException e) {
            counters.error(ErrorKind.DUMP);
            LOG.error("reconcile failed error={}", e.getMessage());
        }
    }

    /** True when every device is present; otherwise tries to re-create them (and replays) and says whether that worked. */
    boolean ensureDevices() throws InterruptedException {
        boolean recreated = false;
        for (VtepDevice dev : devices()) {
            try {
                if (!dev.healthy()) {
                    dev.recreate();
                    counters.recreated();
                    recreated = true;
                }
            } catch (IOException e) {
                counters.error(ErrorKind.DEVICE);
                LOG.error("vxlan device recreate failed name={} error={}", dev.name(), e.getMessage());
                if (healing != null) {
                    healing.retryDeviceLater();
                }
                return false;
            }
        }
        if (recreated) {
            if (healing != null) {
                healing.resetBackoff();
            }
            replay();
        }
        return true;
    }

    /** After a re-creation the device has a new index: plan every peer again and write it all. */
    private void replay() throws InterruptedException {
        List<PeerPlan> old = new ArrayList<>(programmed.values());
        programmed.clear();
        PeerPlanner planner = planner();
        deferred = new ArrayList<>();
        try {
            for (PeerPlan p : old) {
                if (planner.plan(p.lease()) instanceof PeerPlanner.Planned np) {
                    programmed.put(np.plan().key(), np.plan());
                    for (PeerEntries e : np.plan().entries()) {
                        if (e instanceof PeerEntries.Encapsulated enc) {
                            deferred.add(enc);
                        } else {
                            write(e);
                        }
                    }
                }
            }
            flush();
        } finally {
            deferred = null;
        }
        LOG.info("vxlan entries replayed peers={} failing={}", programmed.size(), failing.size());
    }

    private PeerPlanner planner() {
        return new PeerPlanner(v4 == null ? 0 : v4.index(), v6 == null ? 0 : v6.index(), directRouting, this::sameL2);
    }

    /** Upstream's ip.DirectRouting: exactly one route to the peer and it has no gateway. */
    private boolean sameL2(InetAddress peer) {
        try {
            List<Route> routes = nl.routeGet(peer);
            return routes.size() == 1 && routes.get(0).gateway() == null;
        } catch (IOException e) {
            LOG.error("couldn't lookup route to {}: {}", peer.getHostAddress(), e.getMessage());
            return false;
        }
    }

    /** Number of peers with programmed entries. */
    public int peers() {
        return programmed.size();
    }

    @Override
    public void close() {
        closed = true;
        if (healing != null) {
            healing.close();
        }
        nl.close(); // devices and entries stay in place (REFERENCE §9.4)
    }

    boolean closed() {
        return closed;
    }
}
