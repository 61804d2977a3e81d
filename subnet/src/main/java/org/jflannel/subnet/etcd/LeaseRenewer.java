package org.jflannel.subnet.etcd;

import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the own lease key alive (REFERENCE §5.3): at expiration minus the renew margin, a new etcd
 * lease of the full TTL and a plain put of the same value (the old etcd lease is left to expire, as
 * upstream does); a failed renewal is retried after {@link EtcdTimings#renewRetry()}.
 * Reservations (no TTL) are never renewed. Owns the thread {@code etcd-lease-renew}.
 */
final class LeaseRenewer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(LeaseRenewer.class);

    private final EtcdStore store;
    private final EtcdTimings timings;
    private final Clock clock;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "etcd-lease-renew");
        t.setDaemon(true);
        return t;
    });
    private ScheduledFuture<?> next;
    private String key;
    private String value;

    LeaseRenewer(EtcdStore store, EtcdTimings timings, Clock clock) {
        this.store = store;
        this.timings = timings;
        this.clock = clock;
    }

    /** Renews {@code key} (holding {@code value}) before {@code expiration}; replaces any earlier schedule. */
    synchronized void start(String key, String value, Instant expiration) {
        this.key = key;
        this.value = value;
        schedule(Duration.between(clock.instant(), expiration.minus(timings.renewMargin())));
    }

    /** The key was re-put (by us or another writer): renew before its new {@code expiration}. */
    synchronized void reschedule(Instant expiration) {
        if (key != null) {
            schedule(Duration.between(clock.instant(), expiration.minus(timings.renewMargin())));
        }
    }

    /** Stops renewing (the key is gone: a renewal would put it back). */
    synchronized void cancel() {
        if (next != null) {
            next.cancel(false);
            next = null;
        }
        key = null;
    }

    private synchronized void schedule(Duration delay) {
        if (next != null) {
            next.cancel(false);
        }
        if (timer.isShutdown()) {
            return;
        }
        long ms = Math.max(0, delay.toMillis());
        next = timer.schedule(this::renew, ms, TimeUnit.MILLISECONDS);
    }

    private void renew() {
        String k;
        String v;
        synchronized (this) {
            k = key;
            v = value;
        }
        if (k == null) {
            return; // cancelled meanwhile
        }
        try {
            if (store.get(k).map(e -> e.leaseId() == 0).orElse(false)) {
                LOG.info("own lease has no TTL (a reservation), renewal stopped key={}", k);
                cancel();
                return;
            }
            long leaseId = store.grant(timings.leaseTtl());
            synchronized (this) {
                if (key == null) {
                    return; // cancelled while we were granting: a put now would undo a deletion or a reservation
                }
                store.put(k, v, leaseId);
            }
            Instant expiration = clock.instant().plus(timings.leaseTtl());
            LOG.info("lease renewed key={} leaseId={} expires={}", k, Long.toHexString(leaseId), expiration);
            schedule(timings.leaseTtl().minus(timings.renewMargin()));
        } catch (IOException e) {
            LOG.warn("lease renewal failed key={} retryInMs={} reason={}", k, timings.renewRetry().toMillis(), e.getMessage());
            schedule(timings.renewRetry());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt(); // close() is shutting the timer down
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
        try {
            timer.awaitTermination(timings.callTimeout().toMillis(), TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
