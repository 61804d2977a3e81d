package org.jflannel.subnet.etcd;

import java.io.IOException;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ours (issue 23): the first lease watch's client and listing, made ahead of time. The daemon subscribes to the
 * leases only after its own lease, the backend, the rules and subnet.env; until session 10 the watch then built
 * its own jetcd client, connected and listed the prefix, all on the cold start's critical path. This builds and
 * connects that client while the daemon fetches the config and acquires its lease (a {@code get} of the config
 * key on it), and lists {@code <prefix>/subnets} the moment the own lease is written, while the daemon sets up
 * the backend, the rules and subnet.env. The watch then starts from that listing and resumes from its revision
 * + 1, exactly as if it had listed itself: the snapshot still holds the own lease (listed after it was
 * written), and nothing written meanwhile is missed.
 *
 * <p>Owns the thread {@code etcd-watch-prefetch} (gone once the listing is made or failed) and, until
 * {@link #take()}, the client. Any failure only means the watch does it all itself, as before.
 */
final class WatchPrefetch implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(WatchPrefetch.class);

    /** A connected store and the prefix's listing, made after the own lease was written. */
    record Result(EtcdStore store, EtcdStore.Listing listing) {}

    /**
     * How long the watch waits for a listing under way before it lists itself: a healthy listing of 10,000 leases
     * takes 0.1-0.3 s; one stuck behind a connection that is not coming back must not hold the watch.
     */
    private static final Duration TAKE_WAIT = Duration.ofSeconds(3);

    private final LeaseWatch.Connector connector;
    private final String prefix;
    private final String warmKey;
    private final Thread thread;
    private final CountDownLatch acquired = new CountDownLatch(1);
    private final CountDownLatch done = new CountDownLatch(1);
    private Result result;
    private boolean closed;
    private boolean taken;

    /** {@code warmKey}: a key read once to get the client connected (the config key: read anyway, small). */
    WatchPrefetch(LeaseWatch.Connector connector, String prefix, String warmKey) {
        this.connector = connector;
        this.prefix = prefix;
        this.warmKey = warmKey;
        this.thread = new Thread(this::run, "etcd-watch-prefetch");
        this.thread.setDaemon(true);
    }

    WatchPrefetch start() {
        thread.start();
        return this;
    }

    /** The own lease is written: the listing may be made now (it then holds it). */
    void leaseAcquired() {
        acquired.countDown();
    }

    private void run() {
        EtcdStore store = null;
        Result r = null;
        try {
            store = connector.open();
            boolean connected = false;
            try {
                store.get(warmKey);
                connected = true;
            } catch (IOException e) {
                LOG.debug("etcd watch prefetch: connecting failed error={}", e.getMessage());
            }
            acquired.await();
            if (!connected) {
                // a client that never reached etcd (the daemon started during an outage) may sit in gRPC's reconnect
                // back-off for many seconds after etcd is back; the own lease was just written, so a new one connects at once
                store.close();
                store = null;
                store = connector.open();
            }
            long t0 = System.nanoTime();
            EtcdStore.Listing listing = store.list(prefix);
            r = new Result(store, listing);
            LOG.debug("etcd watch prefetch listed prefix={} keys={} revision={} ms={}", prefix, listing.entries().size(),
                    listing.revision(), (System.nanoTime() - t0) / 1_000_000);
        } catch (IOException | RuntimeException e) {
            LOG.debug("etcd watch prefetch failed, the watch lists itself prefix={} error={}", prefix, e.toString());
        } catch (InterruptedException e) {
            LOG.debug("etcd watch prefetch stopped prefix={}", prefix);
        }
        boolean keep;
        synchronized (this) {
            keep = r != null && !closed;
            result = keep ? r : null;
        }
        if (!keep && store != null) {
            store.close();
        }
        done.countDown();
    }

    /**
     * The connected store and listing, waiting for them if the listing is under way (at most {@link #TAKE_WAIT});
     * null when there is none (the own lease not acquired yet, a failure, closed). Once only: the caller
     * owns the store.
     */
    Result take() throws InterruptedException {
        synchronized (this) {
            if (taken || closed) {
                return null;
            }
            taken = true;
        }
        if (acquired.getCount() > 0) {
            close(); // a watch before the own lease: its listing would not hold it
            return null;
        }
        if (!done.await(TAKE_WAIT.toMillis(), TimeUnit.MILLISECONDS)) {
            LOG.debug("etcd watch prefetch not done within {} ms, the watch lists itself prefix={}", TAKE_WAIT.toMillis(), prefix);
            close();
            return null;
        }
        synchronized (this) {
            Result r = result;
            result = null;
            return r;
        }
    }

    /** Stops the thread and closes the client unless taken. */
    @Override
    public void close() {
        Result r;
        synchronized (this) {
            closed = true;
            r = result;
            result = null;
        }
        thread.interrupt();
        if (r != null) {
            r.store().close();
        }
    }
}
