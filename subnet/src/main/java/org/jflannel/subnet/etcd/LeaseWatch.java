package org.jflannel.subnet.etcd;

import io.etcd.jetcd.Watch;
import io.etcd.jetcd.common.exception.CompactedException;
import io.etcd.jetcd.watch.WatchEvent;
import io.etcd.jetcd.watch.WatchResponse;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.random.RandomGenerator;
import org.jflannel.core.LeaseEvent;
import org.jflannel.core.Subscription;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Streams the leases under one etcd prefix (REFERENCE §5.5 and our decisions): one snapshot batch
 * first, then the changes from snapshot revision + 1, always resuming after the last revision seen
 * (never "from now"), reconnecting with back-off, re-listing and diffing after a compaction. While etcd
 * accepts no connections it waits with an {@link EtcdProbe} instead, and then reconnects on a new client.
 *
 * <p>Owns one named platform thread, which does all the work and is the only one calling the sink,
 * and its own etcd client, replaced when a watch cannot be established.
 * jetcd's own watch resumption is not trusted (its "created" handling can skip revisions): on any
 * watch error we close the watcher and open a new one from our own revision.
 */
final class LeaseWatch implements Subscription {
    private static final Logger LOG = LoggerFactory.getLogger(LeaseWatch.class);

    /** What jetcd's callback threads hand to our thread, tagged with the watcher generation. */
    private record Signal(int generation, WatchResponse response, Throwable error) {}

    /** Opens a connection of this watch's own; reopened when a watch cannot be established. */
    interface Connector {
        EtcdStore open() throws IOException;
    }

    /** Effectively "until closed": how long a watch waits for an unreachable etcd. */
    private static final Duration FOREVER = Duration.ofDays(3650);

    private final Connector connector;
    private final EtcdProbe probe;
    private final RandomGenerator random = RandomGenerator.getDefault();
    private EtcdStore store;
    private final String prefix;
    private final Predicate<String> keyFilter;
    private final EtcdTimings timings;
    private final LeaseTable table;
    private final Thread thread;
    private final BlockingQueue<Signal> queue = new LinkedBlockingQueue<>();
    private volatile boolean closed;
    private int generation;
    private long nextRevision;
    /** Whether the current watch got established: the back-off starts over after a working watch. */
    private boolean established;
    /** The first client and listing, made ahead (ours, issue 23); null when none or once used. */
    private WatchPrefetch prefetch;
    /** The prefetch's listing, used by the first {@link #relist} instead of listing again. */
    private EtcdStore.Listing prefetched;

    /** {@code readExpirations}: listings read each key's TTL (the own lease), or estimate them (peers; see {@link Expirations}). */
    LeaseWatch(Connector connector, EtcdProbe probe, String prefix, Predicate<String> keyFilter,
               Consumer<List<LeaseEvent>> sink, String threadName, EtcdTimings timings, Clock clock, boolean readExpirations) {
        this.connector = connector;
        this.probe = probe;
        this.prefix = prefix;
        this.keyFilter = keyFilter;
        this.timings = timings;
        this.table = new LeaseTable(new Expirations(() -> store, clock, timings.leaseTtl(), readExpirations), sink);
        this.thread = new Thread(this::run, threadName);
        this.thread.setDaemon(true);
    }

    LeaseWatch start() {
        thread.start();
        return this;
    }

    /** Starts from {@code p}'s client and listing when it has them (before {@link #start()}). */
    LeaseWatch withPrefetch(WatchPrefetch p) {
        this.prefetch = p;
        return this;
    }

    private void run() {
        Duration backoff = timings.backoffMin();
        boolean listed = false;
        boolean first = true;
        while (!closed) {
            try {
                if (store == null && prefetch != null) {
                    WatchPrefetch p = prefetch;
                    prefetch = null;
                    WatchPrefetch.Result r = p.take();
                    if (r != null) {
                        store = r.store();
                        prefetched = r.listing();
                    }
                }
                if (store == null) {
                    store = connector.open();
                }
                if (!listed) {
                    relist(first);
                    first = false;
                    listed = true;
                }
                listed = watchUntilBroken();   // false after a compaction: list again, at once
                backoff = timings.backoffMin();
                continue;
            } catch (IOException e) {
                backoff = afterFailure(backoff, e);
            } catch (InterruptedException e) {
                break; // close() interrupts us
            } catch (RuntimeException e) {
                LOG.error("etcd lease watch failed prefix={} resumeRevision={} retryInMs={}", prefix, nextRevision,
                        backoff.toMillis(), e);
            }
            try {
                if (!probe.reachable()) {
                    // Ours (issue 23): etcd is down; wait for it with the cheap probe, then reconnect on a new
                    // client at once and resume from our revision (no relist): seen ≤ 0.75 s after it returns
                    if (!probe.await(FOREVER, () -> closed, thread.getName())) {
                        break;
                    }
                    if (store != null) {
                        store.close();
                        store = null;
                    }
                    backoff = timings.backoffMin();
                    continue;
                }
                // etcd answers TCP but the watch failed (no leader, auth, overload): back off, ±20 % at random
                TimeUnit.NANOSECONDS.sleep((long) (backoff.toNanos() * (0.8 + 0.4 * random.nextDouble())));
            } catch (InterruptedException e) {
                break;
            }
            backoff = backoff.multipliedBy(2).compareTo(timings.backoffMax()) > 0 ? timings.backoffMax() : backoff.multipliedBy(2);
        }
        if (prefetch != null) {
            prefetch.close();
        }
        if (store != null) {
            store.close();
        }
    }

    /** Logs a failure; returns the back-off to wait now (from the start again after a watch that worked). */
    private Duration afterFailure(Duration backoff, IOException e) {
        if (established) {
            backoff = timings.backoffMin();
            established = false;
        } else if (store != null) {
            // gRPC's channel backs off its reconnects up to 2 min; a new client connects at once
            store.close();
            store = null;
        }
        LOG.warn("etcd lease watch interrupted prefix={} resumeRevision={} retryInMs={} reason={}",
                prefix, nextRevision, backoff.toMillis(), e.getMessage());
        return backoff;
    }

    /** Lists the prefix; delivers the snapshot (first time) or the difference to what we knew. */
    private void relist(boolean first) throws IOException, InterruptedException {
        EtcdStore.Listing listing = prefetched != null ? prefetched : store.list(prefix);
        prefetched = null;
        List<EtcdStore.Entry> entries = listing.entries().stream().filter(e -> keyFilter.test(e.key())).toList();
        table.replaceAll(entries, first);
        nextRevision = listing.revision() + 1;
        LOG.info("etcd leases listed prefix={} leases={} revision={}", prefix, table.size(), listing.revision());
    }

    /**
     * Watches from {@link #nextRevision} until the watch breaks. Returns true to resume watching
     * (after back-off), false when the revision was compacted and the prefix must be listed again.
     */
    private boolean watchUntilBroken() throws IOException, InterruptedException {
        int gen = ++generation;
        queue.clear();
        Watch.Watcher watcher = store.watch(prefix, nextRevision, new Watch.Listener() {
            @Override
            public void onNext(WatchResponse r) {
                queue.add(new Signal(gen, r, null));
            }

            @Override
            public void onError(Throwable t) {
                queue.add(new Signal(gen, null, t));
            }

            @Override
            public void onCompleted() {
                queue.add(new Signal(gen, null, new IOException("watch completed")));
            }
        });
        established = false;
        try {
            long deadline = System.nanoTime() + timings.callTimeout().toNanos();
            while (!closed) {
                Signal s = established ? queue.take()
                        : queue.poll(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                if (s == null) {
                    throw new IOException("watch not established within " + timings.callTimeout().toMillis() + " ms");
                }
                if (s.generation != gen) {
                    continue; // a late word from a watcher we already closed
                }
                if (s.error instanceof CompactedException c) {
                    LOG.warn("etcd lease watch fell behind compaction, re-listing prefix={} resumeRevision={} compactRevision={}",
                            prefix, nextRevision, c.getCompactedRevision());
                    return false;
                }
                if (s.error != null) {
                    throw new IOException(s.error.getMessage(), s.error);
                }
                if (s.response.isCreatedNotify()) {
                    established = true;
                    continue;
                }
                handle(s.response);
            }
            return true;
        } finally {
            watcher.close();
        }
    }

    private void handle(WatchResponse response) {
        List<WatchEvent> events = new ArrayList<>();
        for (WatchEvent e : response.getEvents()) {
            long rev = e.getKeyValue().getModRevision();
            if (rev < nextRevision) {
                continue; // already seen before a reconnect
            }
            nextRevision = rev + 1;
            if (keyFilter.test(EtcdStore.text(e.getKeyValue().getKey()))) {
                events.add(e);
            }
        }
        table.apply(events);
    }

    /** The revision the next watch starts from (for tests and logs). */
    long nextRevision() {
        return nextRevision;
    }

    @Override
    public void close() {
        closed = true;
        thread.interrupt();
        if (Thread.currentThread() != thread) {
            try {
                thread.join(timings.callTimeout().toMillis());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
