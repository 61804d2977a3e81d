package org.jflannel.subnet.etcd;

import java.time.Clock;
import java.time.Instant;
import java.util.Collection;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Expiration times of etcd leases, as upstream reads them ({@code TimeToLive} per key), but asked
 * for all distinct leases of a batch at once and remembered per lease ID, so that a burst of
 * thousands of events costs one round of pipelined calls, not thousands of sequential ones.
 * Informational only: an unknown expiration is null and never stops a lease from being delivered.
 */
final class Expirations {
    private static final Logger LOG = LoggerFactory.getLogger(Expirations.class);
    private static final int MAX_CACHED = 20_000;

    private final java.util.function.Supplier<EtcdStore> store;
    private final Clock clock;
    private final Map<Long, Instant> cache = new HashMap<>();

    Expirations(java.util.function.Supplier<EtcdStore> store, Clock clock) {
        this.store = store;
        this.clock = clock;
    }

    /** Looks up every lease ID not yet known (0 = no lease = reservation, never looked up). */
    void prefetch(Collection<Long> leaseIds) throws InterruptedException {
        if (cache.size() > MAX_CACHED) {
            cache.clear();
        }
        Set<Long> wanted = new LinkedHashSet<>();
        for (long id : leaseIds) {
            if (id != 0 && !cache.containsKey(id)) {
                wanted.add(id);
            }
        }
        EtcdStore s = store.get();
        Map<Long, CompletableFuture<Long>> calls = new HashMap<>();
        for (long id : wanted) {
            calls.put(id, s.ttlAsync(id));
        }
        long deadline = System.nanoTime() + s.timeout().toNanos();
        for (Map.Entry<Long, CompletableFuture<Long>> c : calls.entrySet()) {
            try {
                long ttl = c.getValue().get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                cache.put(c.getKey(), ttl < 0 ? null : clock.instant().plusSeconds(ttl));
            } catch (ExecutionException | TimeoutException e) {
                c.getValue().cancel(true);
                LOG.debug("lease ttl unknown leaseId={} reason={}", Long.toHexString(c.getKey()), e.toString());
            }
        }
    }

    /** The expiration of {@code leaseId}, or null when it has none (reservation) or is unknown. */
    Instant of(long leaseId) {
        return leaseId == 0 ? null : cache.get(leaseId);
    }
}
