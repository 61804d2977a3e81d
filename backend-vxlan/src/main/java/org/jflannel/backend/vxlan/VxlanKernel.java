package org.jflannel.backend.vxlan;

import java.io.IOException;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashSet;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.jflannel.backend.vxlan.VxlanCounters.ErrorKind;
import org.jflannel.core.Lease;
import org.jflannel.core.peers.Devices;
import org.jflannel.core.peers.LeasePlan;
import org.jflannel.core.peers.PeerKernel;
import org.jflannel.core.peers.ReadBack;
import org.jflannel.core.peers.Writing;
import org.jflannel.linuxnet.netlink.FdbEntry;
import org.jflannel.linuxnet.netlink.Neighbour;
import org.jflannel.linuxnet.netlink.Nexthop;
import org.jflannel.linuxnet.netlink.Route;
import org.jflannel.linuxnet.netlink.RtNetlink;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The VXLAN backend's kernel side for the shared loop: a peer lease wants, per family, a neighbour, an FDB
 * entry and an onlink route on our VTEP (or one direct route), written in upstream's order with its
 * retries ({@link EntryWriter}), pipelined when many ({@link BulkWriter}), read back per device
 * ({@link Reconciler}); a vanished VTEP is re-created. Runs on the lease-events thread.
 */
final class VxlanKernel implements PeerKernel<PeerEntries> {
    private static final Logger LOG = LoggerFactory.getLogger(VxlanKernel.class);

    private final RtNetlink nl;
    private final VtepDevice v4;
    private final VtepDevice v6;
    private final boolean directRouting;
    private final boolean nexthops;
    private final EntryWriter writer;
    private final BulkWriter bulk;
    private final Reconciler reconciler;
    private final VxlanCounters counters;
    /**
     * The first batch's comparison with the kernel (per device index, strays included) and the peers whose write then
     * failed: the read-back of the reconcile that follows that batch at once ({@link #readBack}) uses it instead of
     * dumping the same tables again. Null when there is none, or once used; lease-events thread only.
     */
    private Primed primed;
    /** Set when a second first-batch write came: the first one's comparison no longer covers all that was written. */
    private boolean primedSpoilt;

    private record Primed(Map<Integer, KernelDiff> diffs, Set<PeerEntries> failed) {}

    /** One device's four tables, dumped ahead of the first batch (ours, issue 23). */
    private record Dumps(List<Neighbour> neighbours, List<FdbEntry> fdb, List<Route> routes, List<Nexthop> nexthops) {}

    /**
     * The devices' tables as dumped ahead of the first batch, per index, and when the dump started; null when none,
     * once used, or spoilt. Set by {@link #dumpAhead}; the first batch takes it on the lease-events thread.
     */
    private volatile CompletableFuture<Map<Integer, Dumps>> ahead;
    private volatile long aheadNanos;
    /** Set by the netlink watcher when something of ours was deleted after the dump ahead began: dump again. */
    private volatile boolean aheadSpoilt;
    /**
     * A dump ahead older than this is not used (dumped again): one periodic pass's interval, the longest a change
     * that is no deletion goes unseen anyway. (2 s was too short on a loaded node: planning 10,000 peers comes first.)
     */
    private static final long AHEAD_MAX_AGE_NANOS = TimeUnit.SECONDS.toNanos(10);

    /** Names and indices of our devices as last seen, for the netlink watcher's thread. */
    private volatile List<String> names = List.of();
    private volatile int[] indices = new int[0];

    VxlanKernel(RtNetlink nl, VtepDevice v4, VtepDevice v6, boolean directRouting, boolean nexthops, Retry retry,
                VxlanCounters counters) {
        this.nl = nl;
        this.nexthops = nexthops;
        this.v4 = v4;
        this.v6 = v6;
        this.directRouting = directRouting;
        this.counters = counters;
        this.writer = new EntryWriter(nl, retry, counters);
        this.bulk = new BulkWriter(nl, counters);
        this.reconciler = new Reconciler(nl, writer);
        refreshWatch();
    }

    @Override
    public LeasePlan<PeerEntries> plan(Lease lease) {
        PeerPlanner.Outcome outcome = planner().plan(lease);
        if (outcome instanceof PeerPlanner.Planned p) {
            return LeasePlan.of(lease, p.plan().entries());
        }
        return LeasePlan.skipped(((PeerPlanner.Skipped) outcome).reason());
    }

    /** Not programmed by us (e.g. skipped earlier, or before a restart): remove what it would have made. */
    @Override
    public List<PeerEntries> forgotten(Lease lease) {
        return planner().plan(lease) instanceof PeerPlanner.Planned p ? p.plan().entries() : List.of();
    }

    @Override
    public String describe(PeerEntries e) {
        return e.describe();
    }

    /**
     * Few entries: one by one with upstream's retries. Many: pipelined (the encapsulated ones; in the first
     * batch only those the kernel does not already hold), the failures again one by one.
     */
    @Override
    public List<PeerEntries> write(List<PeerEntries> entries, Writing<PeerEntries> how) throws InterruptedException {
        List<PeerEntries> failed = new ArrayList<>();
        List<PeerEntries.Encapsulated> pipelined = new ArrayList<>();
        for (PeerEntries e : entries) {
            if (how.bulk() && e instanceof PeerEntries.Encapsulated enc) {
                pipelined.add(enc);
            } else if (!writer.program(subject(e), e)) {
                failed.add(e);
            }
        }
        Map<Integer, KernelDiff> diffs = how.first() ? skipPresent(pipelined) : Map.of();
        for (PeerEntries.Encapsulated e : pipelined.isEmpty() ? List.<PeerEntries.Encapsulated>of() : bulk.program(pipelined)) {
            if (!writer.program(subject(e), e)) {
                failed.add(e);
            }
        }
        if (how.first()) {
            primedSpoilt |= primed != null;
            primed = diffs.isEmpty() || primedSpoilt ? null : new Primed(diffs, new HashSet<>(failed));
        }
        return failed;
    }

    /**
     * Ours (issue 23): drops from {@code entries} the peers whose neighbour, FDB entry and route are all already
     * in the kernel as wanted (one dump per table and device). After a restart the kernel still holds every
     * peer (§9.4), and re-writing 10,000 routes through the kernel's route insertion (quadratic on one device,
     * docs/benchmarks.md) took seconds for no change; on a fresh device the dumps are empty and cost nothing.
     * A failed dump keeps every entry (the write is idempotent). Returns the comparisons per device index, strays
     * included (the first batch is the complete lease list), for the read-back that follows the batch.
     */
    private Map<Integer, KernelDiff> skipPresent(List<PeerEntries.Encapsulated> entries) throws InterruptedException {
        Map<Integer, KernelDiff> diffs = new HashMap<>();
        Map<Integer, Dumps> dumped = takeAhead();
        if (entries.isEmpty()) {
            return diffs;
        }
        int before = entries.size();
        for (VtepDevice dev : devicesPresent()) {
            int idx = dev.index();
            List<PeerEntries.Encapsulated> mine = entries.stream().filter(e -> e.neighbour().linkIndex() == idx).toList();
            if (mine.isEmpty()) {
                continue;
            }
            try {
                Set<PeerEntries> wrong = new HashSet<>();
                Dumps d = dumped == null ? null : dumped.get(idx);
                KernelDiff diff = d != null
                        ? KernelDiff.of(mine, d.neighbours(), d.fdb(), d.routes(), d.nexthops(), true)
                        : KernelDiff.of(mine, nl.neighbours(idx), nl.fdb(idx), nl.routesOf(idx), nl.nexthops(idx), true);
                diff.missing().forEach(m -> wrong.add(m.entries()));
                entries.removeIf(e -> e.neighbour().linkIndex() == idx && !wrong.contains(e));
                diffs.put(idx, diff);
            } catch (IOException e) {
                LOG.warn("kernel entries not read, writing all device={} error={}", dev.name(), e.getMessage());
            }
        }
        if (entries.size() < before) {
            LOG.info("peers already programmed, not written again peers={} toWrite={}", before - entries.size(), entries.size());
        }
        return diffs;
    }

    /**
     * Ours (issue 23): dumps our devices' neighbours, FDB entries, routes and nexthops now, on a socket of its own
     * opened on the calling thread (its network namespace) and a short-lived thread, so that on a restart the dumps
     * the first batch compares against (10,000 peers: 40,000 entries) overlap the daemon's rules, subnet.env and the
     * lease listing instead of following them. Called once the netlink watch is subscribed: any change the
     * watch reports to our device or its entries after this point (added, replaced or deleted) spoils the dump ahead
     * ({@link #spoilAhead}) and the first batch dumps again, as does a dump older than 10 s.
     */
    void dumpAhead() {
        List<VtepDevice> devs = devicesPresent();
        if (devs.isEmpty()) {
            return;
        }
        RtNetlink own;
        try {
            own = RtNetlink.open();
        } catch (IOException | RuntimeException e) {
            LOG.debug("kernel entries not dumped ahead error={}", e.getMessage());
            return;
        }
        CompletableFuture<Map<Integer, Dumps>> f = new CompletableFuture<>();
        aheadSpoilt = false;
        aheadNanos = System.nanoTime();
        ahead = f;
        Thread t = new Thread(() -> {
            try (own) {
                Map<Integer, Dumps> out = new HashMap<>();
                for (VtepDevice dev : devs) {
                    int idx = dev.index();
                    out.put(idx, new Dumps(own.neighbours(idx), own.fdb(idx), own.routesOf(idx), own.nexthops(idx)));
                }
                f.complete(out);
            } catch (IOException | RuntimeException e) {
                f.completeExceptionally(e);
            }
        }, "vxlan-dump-ahead");
        t.setDaemon(true);
        t.start();
    }

    /** Something of ours was deleted (netlink watcher's thread): a dump made ahead no longer holds. */
    void spoilAhead() {
        aheadSpoilt = true;
    }

    boolean aheadSpoilt() {
        return aheadSpoilt;
    }

    /** Whether the tables dumped ahead are there, not yet taken (tests). */
    boolean aheadDumped() {
        CompletableFuture<Map<Integer, Dumps>> f = ahead;
        return f != null && f.isDone() && !f.isCompletedExceptionally();
    }

    /** The dumps made ahead, if usable (complete, unspoilt, recent); null otherwise. Lease-events thread; once. */
    private Map<Integer, Dumps> takeAhead() throws InterruptedException {
        CompletableFuture<Map<Integer, Dumps>> f = ahead;
        ahead = null;
        if (f == null) {
            return null;
        }
        try {
            Map<Integer, Dumps> d = f.get(5, TimeUnit.SECONDS);
            if (aheadSpoilt || System.nanoTime() - aheadNanos > AHEAD_MAX_AGE_NANOS) {
                LOG.debug("kernel entries dumped ahead not used spoilt={}", aheadSpoilt);
                return null;
            }
            return d;
        } catch (ExecutionException | TimeoutException e) {
            LOG.debug("kernel entries dumped ahead not used error={}", e.toString());
            return null;
        }
    }

    /** The first batch's comparison as the kernel should be after its write: only failed peers missing, taken-over FDB strays gone. */
    private static KernelDiff afterWrite(KernelDiff before, Set<PeerEntries> failed) {
        Set<org.jflannel.core.MacAddress> written = new HashSet<>();
        List<KernelDiff.Missing> still = new ArrayList<>();
        for (KernelDiff.Missing m : before.missing()) {
            if (failed.contains(m.entries())) {
                still.add(m);
            } else if (m.entries() instanceof PeerEntries.Encapsulated e) {
                written.add(e.fdb().mac());
            }
        }
        List<org.jflannel.linuxnet.netlink.FdbEntry> fdb = before.strayFdb().stream().filter(f -> !written.contains(f.mac())).toList();
        return new KernelDiff(still, before.strayNeighbours(), fdb, before.strayRoutes(), before.strayNexthops());
    }

    @Override
    public boolean repair(ReadBack.Missing<PeerEntries> m, boolean failedBefore) throws InterruptedException {
        if (m.entry() instanceof PeerEntries.Direct) {
            LOG.info("entry repaired {}", m.entry().describe());
        } else {
            LOG.info("entry repaired {} parts={}", m.entry().describe(), m.parts());
        }
        return writer.programOnce(subject(m.entry()), m.entry());
    }

    @Override
    public void delete(PeerEntries e) {
        writer.remove(subject(e), e);
    }

    /** Brings back vanished devices (each a new index: the loop replays every peer on it). */
    @Override
    public Devices devices() throws InterruptedException {
        boolean recreated = false;
        try {
            for (VtepDevice dev : devicesPresent()) {
                try {
                    if (!dev.healthy()) {
                        primed = null; // a new device: nothing of the first batch's comparison holds
                        ahead = null;
                        dev.recreate();
                        counters.recreated();
                        recreated = true;
                    }
                } catch (IOException e) {
                    counters.error(ErrorKind.DEVICE);
                    LOG.error("vxlan device recreate failed name={} error={}", dev.name(), e.getMessage());
                    return Devices.FAILED;
                }
            }
        } finally {
            refreshWatch();
        }
        return recreated ? Devices.RENEWED : Devices.READY;
    }

    /**
     * Per device: its own state put right, then its neighbours, FDB and routes; then the direct routes. Right after the
     * first batch (ours, issue 23) a device's tables are not dumped again: the batch compared them a moment before
     * and wrote what differed, so what is missing now is what it failed to write, and the strays are those it found
     * (less FDB entries of a MAC it wrote, which its replace took over). At 10,000 peers that is four dumps and a
     * comparison less on a restart's critical path; the periodic and event-driven passes dump as always.
     */
    @Override
    public ReadBack<PeerEntries> readBack(Collection<PeerEntries> desired, boolean withStrays) throws IOException {
        List<ReadBack.Missing<PeerEntries>> missing = new ArrayList<>();
        List<Runnable> strays = new ArrayList<>();
        int fixed = 0;
        Primed p = primed;
        primed = null;
        ahead = null; // the first batch took it, or there was none with peers to compare: not kept
        for (VtepDevice dev : devicesPresent()) {
            fixed += dev.repairState();
            KernelDiff diff = p != null && withStrays ? p.diffs().get(dev.index()) : null;
            if (diff == null) {
                reconciler.device(dev, desired, withStrays, missing, strays);
            } else {
                reconciler.fromDiff(dev, afterWrite(diff, p.failed()), missing, strays);
            }
        }
        reconciler.direct(desired, missing);
        return new ReadBack<>(missing, strays, fixed);
    }

    private PeerPlanner planner() {
        return new PeerPlanner(v4 == null ? 0 : v4.index(), v6 == null ? 0 : v6.index(), directRouting, this::sameL2, nexthops);
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

    private static String subject(PeerEntries e) {
        return e.route().dst().toString();
    }

    /** Our devices (one or two). */
    List<VtepDevice> devicesPresent() {
        List<VtepDevice> out = new ArrayList<>(2);
        if (v4 != null) {
            out.add(v4);
        }
        if (v6 != null) {
            out.add(v6);
        }
        return out;
    }

    private void refreshWatch() {
        List<VtepDevice> devs = devicesPresent();
        names = devs.stream().map(VtepDevice::name).toList();
        indices = devs.stream().mapToInt(VtepDevice::index).toArray();
    }

    /** Whether a link of this name or index is one of our devices (any thread). */
    boolean ours(String name, int index) {
        return names.contains(name) || ours(index);
    }

    boolean ours(int index) {
        for (int i : indices) {
            if (i == index && index > 0) {
                return true;
            }
        }
        return false;
    }
}
