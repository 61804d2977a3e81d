package org.jflannel.subnet.etcd;

import java.time.Clock;
import java.time.Instant;
import java.util.Collection;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Expiration times of etcd leases. Where they matter (the own lease: its renewal follows them) a
 * listing reads them as upstream does ({@code TimeToLive} per key), at most {@link #MAX_IN_FLIGHT} at
 * once, remembered per lease ID. Where they do not (the peers: no backend uses a peer's expiration,
 * etcd deletes an expired key and the watch reports that) they are never read ({@code read} false):
 * 2,000 {@code TimeToLive} calls made the first listing 0.55-0.6 s slower and grew jetcd's pool to
 * ~30 threads. For a live watch event they are not read either: the key was just put, and flanneld
 * always grants a fresh 24 h lease right before its put, so the expiration is "now + 24 h" (a
 * {@code TimeToLive} round trip per event made a burst of 2,000 leases arrive 1.3 s late instead of
 * 10 ms). A null expiration means exactly "no etcd lease" (a reservation); an unread or unreadable TTL
 * is estimated as "now + lease TTL", never stops a lease from being delivered.
 */
final class Expirations {
    private static final Logger LOG = LoggerFactory.getLogger(Expirations.class);
    private static final int MAX_CACHED = 20_000;

    private final java.util.function.Supplier<EtcdStore> store;
    private final Clock clock;
    private final java.time.Duration leaseTtl;
    private final boolean read;
    private final Map<Long, Instant> cache = new HashMap<>();

    /**
     * {@code leaseTtl}: what flanneld grants before each put (24 h; shorter in tests); {@code read}:
     * whether listings read the real TTLs, or estimate them all.
     */
    Expirations(java.util.function.Supplier<EtcdStore> store, Clock clock, java.time.Duration leaseTtl, boolean read) {
        this.store = store;
        this.clock = clock;
        this.leaseTtl = leaseTtl;
        this.read = read;
    }

    /**
     * TimeToLive calls in flight at once. All at once (upstream's way) made jetcd's pool grow to ~77
     * threads at 2,000 leases and, at 10,000, exhausted the daemon's 48 MB heap (docs/benchmarks.md).
     */
    static final int MAX_IN_FLIGHT = 64;

    /** Looks up every lease ID not yet known (0 = no lease = reservation, never looked up); nothing unless {@code read}. */
    void prefetch(Collection<Long> leaseIds) throws InterruptedException {
        if (!read) {
            return;
        }
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
        List<Long> ids = new ArrayList<>(wanted);
        for (int from = 0; from < ids.size(); from += MAX_IN_FLIGHT) {
            fetch(s, ids.subList(from, Math.min(ids.size(), from + MAX_IN_FLIGHT)));
        }
    }

    /** One window of TimeToLive calls, in flight together, each bounded by the store's call timeout. */
    private void fetch(EtcdStore s, List<Long> window) throws InterruptedException {
        Map<Long, CompletableFuture<Long>> calls = new HashMap<>();
        for (long id : window) {
            calls.put(id, s.ttlAsync(id));
        }
        long deadline = System.nanoTime() + s.timeout().toNanos();
        for (Map.Entry<Long, CompletableFuture<Long>> c : calls.entrySet()) {
            try {
                long ttl = c.getValue().get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                cache.put(c.getKey(), clock.instant().plusSeconds(Math.max(0, ttl)));
            } catch (ExecutionException | TimeoutException e) {
                c.getValue().cancel(true);
                LOG.debug("lease ttl unknown leaseId={} reason={}", Long.toHexString(c.getKey()), e.toString());
            }
        }
    }

    /** For a key put just now under {@code leaseId}: "now + lease TTL", or null for a key without lease. */
    Instant ofFreshPut(long leaseId) {
        return leaseId == 0 ? null : clock.instant().plus(leaseTtl);
    }

    /**
     * The expiration of {@code leaseId}: null exactly when the key has no lease (a reservation); when
     * its TTL could not be read, estimated as for a fresh put.
     */
    Instant of(long leaseId) {
        if (!read) {
            return ofFreshPut(leaseId); // nothing read, nothing worth remembering
        }
        return leaseId == 0 ? null : cache.computeIfAbsent(leaseId, id -> clock.instant().plus(leaseTtl));
    }
}
