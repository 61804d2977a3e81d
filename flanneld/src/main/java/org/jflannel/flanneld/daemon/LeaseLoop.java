package org.jflannel.flanneld.daemon;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseEvent;
import org.jflannel.core.LeaseWatcher;
import org.jflannel.core.Network;
import org.jflannel.core.SubnetManager;
import org.jflannel.core.Subscription;
import org.jflannel.flanneld.health.Metrics;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@code lease-events} thread (DESIGN §3 steps 4–6): the subnet manager's batches are diffed by
 * a {@link LeaseWatcher} that drops our own lease and handed to {@link Network#apply}. The backend
 * runs its reconcile and self-healing on the same thread through {@link #executor()}, so the
 * network is only ever touched by this one thread.
 */
final class LeaseLoop implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(LeaseLoop.class);

    private final ExecutorService thread = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "lease-events");
        t.setDaemon(true);
        return t;
    });
    private final Metrics metrics;
    /** The start-up's heap growth, made tight again before the collection after the snapshot; none in tests. */
    private final Optional<StartupHeap> startupHeap;
    private Subscription subscription;
    private LeaseWatcher watcher;
    private boolean snapshotSeen;
    private volatile Consumer<List<LeaseEvent>> peerListener = diff -> { };
    /** Batches received and not yet applied, oldest first; drained by one task at a time. */
    private final ConcurrentLinkedQueue<Received> pending = new ConcurrentLinkedQueue<>();
    private final AtomicBoolean drainScheduled = new AtomicBoolean();

    private record Received(List<LeaseEvent> batch, long nanos) {}

    LeaseLoop(Metrics metrics) {
        this(metrics, Optional.empty());
    }

    LeaseLoop(Metrics metrics, Optional<StartupHeap> startupHeap) {
        this.metrics = metrics;
        this.startupHeap = startupHeap;
    }

    /** Runs tasks on the lease-events thread; tasks submitted after {@link #close()} are dropped. */
    Executor executor() {
        return task -> {
            try {
                thread.execute(task);
            } catch (RejectedExecutionException e) {
                LOG.debug("lease-events task dropped: loop closed");
            }
        };
    }

    /** Also hands every applied diff to {@code listener} (on this thread; it must not block): the peer prober. */
    void onPeers(Consumer<List<LeaseEvent>> listener) {
        this.peerListener = listener;
    }

    /** Subscribes; the first batch is the snapshot, later ones are changes. */
    void start(SubnetManager subnets, Network network) throws IOException {
        Lease own = network.lease();
        executor().execute(() -> watcher = new LeaseWatcher(own));
        subscription = subnets.watchLeases(batch -> {
            pending.add(new Received(batch, System.nanoTime()));
            if (drainScheduled.compareAndSet(false, true)) {
                executor().execute(() -> drain(network));
            }
        });
        LOG.info("lease-events loop started own={}", own.key());
    }

    /**
     * Applies every batch received so far as one (ours, issue 23): while a large apply runs, the watch keeps
     * delivering small batches (a burst of puts arrives a few events per watch response); applied one by one
     * each would take the per-peer path (three round trips per peer), merged they take the pipelined one.
     * The merge is exact: {@link LeaseWatcher#update} reduces any sequence of events to its net effect.
     * The snapshot (the first batch) is always applied on its own.
     */
    private void drain(Network network) {
        drainScheduled.set(false);
        List<LeaseEvent> merged = new ArrayList<>();
        long oldest = 0;
        Received r;
        while ((r = pending.poll()) != null) {
            if (!snapshotSeen) {
                handle(r.batch(), network, r.nanos());
                continue;
            }
            if (merged.isEmpty()) {
                oldest = r.nanos();
            }
            merged.addAll(r.batch());
        }
        if (!merged.isEmpty()) {
            handle(merged, network, oldest);
        }
    }

    private void handle(List<LeaseEvent> batch, Network network, long receivedNanos) {
        try {
            boolean snapshot = !snapshotSeen;
            snapshotSeen = true;
            List<LeaseEvent> diff = snapshot
                    ? watcher.reset(batch.stream().filter(e -> e.type() == LeaseEvent.Type.ADDED).map(LeaseEvent::lease).toList())
                    : watcher.update(batch);
            if (!diff.isEmpty()) {
                for (LeaseEvent e : diff) {
                    LOG.debug("lease {} lease={}", e.type() == LeaseEvent.Type.ADDED ? "added" : "removed", e.lease());
                }
                network.apply(diff);
                metrics.observeProgrammedSeconds((System.nanoTime() - receivedNanos) / 1e9);
                peerListener.accept(diff);
            }
            metrics.setLeases(watcher.leases().size());
            if (snapshot) {
                LOG.info("lease snapshot programmed leases={} seconds={}", watcher.leases().size(),
                        String.format("%.3f", (System.nanoTime() - receivedNanos) / 1e9));
                boolean tightened = startupHeap.map(StartupHeap::tight).orElse(false);
                compactHeap(tightened);
            }
        } catch (RuntimeException e) {
            metrics.error("apply");
            LOG.error("lease batch failed events={} error={}", batch.size(), e.toString());
        }
    }

    /**
     * One full collection once the snapshot is programmed: the start-up's garbage (flag parsing, the whole
     * listing parsed, the first netlink dumps) is dead by then, and with the launchers' {@code
     * -XX:MaxHeapFreeRatio=10 -XX:-ShrinkHeapInSteps} SerialGC gives the heap it grew for it back at once,
     * where otherwise it keeps it until the old generation fills (-2.8 MB of RSS at 2,000 etcd leases,
     * docs/benchmarks.md "session 8"). A pause of tens of ms, once. The start-up ran with the JDK's growth
     * ratios ({@link StartupHeap}, issue 23); {@code tightened}: the launcher's were just put back for this one.
     */
    private static void compactHeap(boolean tightened) {
        long t0 = System.nanoTime();
        System.gc();
        LOG.debug("heap compacted after the snapshot ms={} ratiosRestored={}", (System.nanoTime() - t0) / 1_000_000, tightened);
    }

    /** Stops the subscription, closes {@code network} on this thread (no race with apply), then the thread. */
    void close(Network network) {
        if (subscription != null) {
            subscription.close();
        }
        executor().execute(network::close);
        close();
    }

    /** Stops the thread; the work in flight finishes (up to 5 s). */
    @Override
    public void close() {
        if (subscription != null) {
            subscription.close();
            subscription = null;
        }
        thread.shutdown();
        try {
            if (!thread.awaitTermination(5, TimeUnit.SECONDS)) {
                thread.shutdownNow();
                LOG.warn("lease-events thread did not stop within 5 s");
            }
        } catch (InterruptedException e) {
            thread.shutdownNow();
            Thread.currentThread().interrupt();
        }
    }
}
