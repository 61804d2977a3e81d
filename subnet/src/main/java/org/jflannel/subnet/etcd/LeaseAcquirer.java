package org.jflannel.subnet.etcd;

import java.io.IOException;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.random.RandomGenerator;
import org.jflannel.core.ConfigException;
import org.jflannel.core.Ip4Net;
import org.jflannel.core.Ip6Net;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseAttrs;
import org.jflannel.core.NetConf;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Acquires the own lease in etcd (REFERENCE §5.4 and our decisions): reuse a lease carrying our
 * public IP if it fits the config (delete those that do not, unless they are reservations), else the previous subnet from subnet.env if it
 * fits and is free, else a random free one; create with {@code If(Version(key)==0)} and a fresh etcd
 * lease, and on a lost race revoke that lease, list again and choose again, up to
 * {@value #MAX_ATTEMPTS} times. Reservations (keys without TTL) are reused without a TTL.
 */
final class LeaseAcquirer {
    static final int MAX_ATTEMPTS = 10;
    private static final Logger LOG = LoggerFactory.getLogger(LeaseAcquirer.class);

    /** The acquired lease, its etcd key and value, and whether it is a reservation (never renewed). */
    record Acquired(Lease lease, String key, String value, boolean reservation) {}

    /** A parsed listing entry. */
    private record Known(EtcdStore.Entry entry, LeaseKeyCodec.Subnets subnets, LeaseAttrs attrs) {}

    /** The attributes of a listed lease that is not this node's (never parsed) or cannot be parsed. */
    private static final LeaseAttrs NOT_OURS = new LeaseAttrs(null, null, "", null, null);

    private final EtcdStore store;
    private final EtcdOptions options;
    private final EtcdTimings timings;
    private final Clock clock;
    private final RandomGenerator random;
    private final Ip4Net previous4;
    private final Ip6Net previous6;
    /** The first acquisition's listing, started ahead (ours, issue 23); null when none is pending. */
    private CompletableFuture<EtcdStore.Listing> ahead;
    private long aheadStartNanos;
    private boolean listedAhead;
    /** A listing started ahead older than this is not used (the acquisition lists again). */
    private static final long AHEAD_MAX_AGE_NANOS = TimeUnit.SECONDS.toNanos(5);

    LeaseAcquirer(EtcdStore store, EtcdOptions options, EtcdTimings timings, Clock clock, RandomGenerator random,
                  Ip4Net previous4, Ip6Net previous6) {
        this.store = store;
        this.options = options;
        this.timings = timings;
        this.clock = clock;
        this.random = random;
        this.previous4 = previous4;
        this.previous6 = previous6;
    }

    /**
     * Ours (issue 23): lists {@code <prefix>/subnets} in the background, once, for the first acquisition's first
     * attempt; the daemon calls it when it has the config, and the listing (10,000 keys: a few hundred ms) then
     * overlaps the interface selection and the backend's device set-up that come before the acquisition. Taking a
     * listing a moment early changes nothing: the creation is conditional on the key's absence (in dual stack also
     * checked after it, see {@link #lostDualStackRace}), and only this node writes leases with its public IP.
     * Returns the listing's future (tests wait on it); a second call returns the first call's future.
     */
    CompletableFuture<EtcdStore.Listing> listAhead() {
        if (listedAhead) {
            return ahead;
        }
        listedAhead = true;
        CompletableFuture<EtcdStore.Listing> f = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            try {
                f.complete(store.list(options.subnetsPrefix()));
            } catch (IOException | RuntimeException e) {
                f.completeExceptionally(e);
            } catch (InterruptedException e) {
                f.completeExceptionally(e);
            }
        }, "etcd-list-ahead");
        t.setDaemon(true);
        aheadStartNanos = System.nanoTime();
        ahead = f;
        t.start();
        return f;
    }

    /** The listing started ahead if there is one, recent and successful; null otherwise (then list now). */
    private EtcdStore.Listing takeAhead() throws InterruptedException {
        CompletableFuture<EtcdStore.Listing> f = ahead;
        ahead = null;
        if (f == null || System.nanoTime() - aheadStartNanos > AHEAD_MAX_AGE_NANOS) {
            return null;
        }
        try {
            return f.get(timings.callTimeout().toMillis(), TimeUnit.MILLISECONDS);
        } catch (ExecutionException | TimeoutException e) {
            LOG.debug("listing ahead failed, listing again error={}", e.toString());
            return null;
        }
    }

    Acquired acquire(NetConf conf, LeaseAttrs attrs) throws IOException, InterruptedException, ConfigException {
        if (!conf.enableIPv4()) {
            throw new ConfigException("EnableIPv4", options.configKey()
                    + ": EnableIPv4: etcd lease keys always name an IPv4 subnet; IPv6-only needs the kube subnet manager");
        }
        if (attrs.publicIp() == null) {
            throw new ConfigException("PublicIP", "lease: PublicIP: the etcd subnet manager needs the node's public IPv4");
        }
        String value = LeaseValueCodec.format(attrs);
        SubnetAllocator alloc = new SubnetAllocator(conf, random);
        for (int attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
            EtcdStore.Listing early = attempt == 1 ? takeAhead() : null;
            List<Known> leases = list(early != null ? early : store.list(options.subnetsPrefix()),
                    attrs.publicIp().getHostAddress());
            List<Known> mine = leases.stream().filter(k -> attrs.publicIp().equals(k.attrs().publicIp())).toList();
            Optional<Known> reusable = mine.stream()
                    .filter(k -> alloc.compatible(k.subnets().ipv4(), k.subnets().ipv6())).findFirst();
            if (reusable.isPresent()) {
                return reuse(reusable.get(), attrs, value);
            }
            for (Known stale : mine) {
                if (stale.entry().leaseId() == 0) {
                    // Ours: the daemon never deletes a reservation, even one that no longer fits
                    LOG.warn("reservation incompatible with the network config, left alone key={}", stale.entry().key());
                } else {
                    LOG.info("lease incompatible with the network config, deleting key={}", stale.entry().key());
                    store.delete(stale.entry().key());
                    leases.remove(stale);
                }
            }
            Acquired created = create(conf, alloc, leases, attrs, value);
            if (created != null) {
                return created;
            }
        }
        throw new IOException("failed to acquire lease: lost the race for a free subnet " + MAX_ATTEMPTS + " times");
    }

    private Acquired reuse(Known own, LeaseAttrs attrs, String value) throws IOException, InterruptedException {
        String key = own.entry().key();
        Lease lease;
        if (own.entry().leaseId() == 0) {
            // Ours: a reservation keeps no TTL; only our current backend data is published into it
            if (!own.entry().value().equals(value)) {
                store.put(key, value, 0);
            }
            lease = new Lease(own.subnets().ipv4(), own.subnets().ipv6(), attrs, null);
            LOG.info("lease reused reservation key={} subnet={}", key, lease.subnet());
            return new Acquired(lease, key, value, true);
        }
        long leaseId = store.grant(timings.leaseTtl());
        store.put(key, value, leaseId);
        lease = new Lease(own.subnets().ipv4(), own.subnets().ipv6(), attrs, expiration());
        LOG.info("lease reused key={} subnet={} expires={}", key, lease.subnet(), lease.expiration());
        return new Acquired(lease, key, value, false);
    }

    /** One creation attempt; null when another node took the subnet between our list and our transaction. */
    private Acquired create(NetConf conf, SubnetAllocator alloc, List<Known> leases, LeaseAttrs attrs, String value)
            throws IOException, InterruptedException {
        List<Ip4Net> taken4 = new ArrayList<>();
        List<Ip6Net> taken6 = new ArrayList<>();
        for (Known k : leases) {
            taken4.add(k.subnets().ipv4());
            if (k.subnets().ipv6() != null) {
                taken6.add(k.subnets().ipv6());
            }
        }
        Ip4Net v4;
        Ip6Net v6;
        Ip6Net prev6 = conf.enableIPv6() ? previous6 : null;
        if (previous4 != null && alloc.compatible(previous4, prev6)
                && SubnetAllocator.isFree(previous4, prev6, taken4, taken6)) {
            v4 = previous4;
            v6 = prev6;
        } else {
            v4 = alloc.free4(taken4).orElseThrow(() -> new IOException("out of subnets"));
            v6 = conf.enableIPv6() ? alloc.free6(taken6).orElseThrow(() -> new IOException("out of subnets")) : null;
        }
        String key = options.subnetKey(LeaseKeyCodec.format(v4, v6));
        long leaseId = store.grant(timings.leaseTtl());
        if (store.createIfAbsent(key, value, leaseId)) {
            if (v6 != null && lostDualStackRace(key, v4, v6)) {
                store.delete(key);
                revokeQuietly(leaseId);
                return null;
            }
            Lease lease = new Lease(v4, v6, attrs, expiration());
            LOG.info("lease acquired key={} subnet={} expires={}", key, v4, lease.expiration());
            return new Acquired(lease, key, value, false);
        }
        LOG.info("lease taken by another node meanwhile, choosing again key={}", key);
        revokeQuietly(leaseId);
        return null;
    }

    private void revokeQuietly(long leaseId) throws InterruptedException {
        try {
            store.revoke(leaseId);
        } catch (IOException e) {
            LOG.warn("etcd lease revoke failed leaseId={} reason={}", Long.toHexString(leaseId), e.getMessage());
        }
    }

    /**
     * Ours: in dual stack a lease key names both subnets ({@code 10.244.7.0-24&fd00:0:0:7::-64}, as upstream's),
     * so the transaction on its absence protects neither subnet alone: two nodes that chose the same IPv6 subnet
     * with different IPv4 ones (or the reverse) from listings taken before either created its key would both
     * succeed, as upstream's would. After creating, the key's creator lists again: a key created before ours (a
     * lower create revision) whose subnets overlap ours wins, and ours is deleted. The later of two racing nodes
     * always sees the earlier one's key, since it lists after its own creation.
     */
    private boolean lostDualStackRace(String key, Ip4Net v4, Ip6Net v6) throws IOException, InterruptedException {
        EtcdStore.Listing now = store.listKeys(options.subnetsPrefix()); // keys and revisions are all it needs
        long ours = now.entries().stream().filter(e -> e.key().equals(key)).mapToLong(EtcdStore.Entry::createRevision)
                .findFirst().orElse(Long.MAX_VALUE);
        for (EtcdStore.Entry e : now.entries()) {
            if (e.key().equals(key) || e.createRevision() >= ours) {
                continue;
            }
            LeaseKeyCodec.Subnets s;
            try {
                s = LeaseKeyCodec.parse(e.key());
            } catch (ConfigException ex) {
                continue; // skipped by every listing
            }
            if (s.ipv4().overlaps(v4) || (s.ipv6() != null && s.ipv6().overlaps(v6))) {
                LOG.info("lease subnet also chosen by an earlier key, choosing again key={} earlier={}", key, e.key());
                return true;
            }
        }
        return false;
    }

    /**
     * All keys of a listing of {@code <prefix>/subnets}; bad keys are skipped, bad values still occupy their subnet.
     * Only values that mention {@code publicIp} are parsed (the others only occupy their subnet, and their
     * attributes are never read): at 10,000 leases parsing every value was most of a cold start's acquire.
     */
    private List<Known> list(EtcdStore.Listing listing, String publicIp) {
        List<Known> out = new ArrayList<>();
        for (EtcdStore.Entry e : listing.entries()) {
            LeaseKeyCodec.Subnets s;
            try {
                s = LeaseKeyCodec.parse(e.key());
            } catch (ConfigException ex) {
                LOG.warn("lease skipped key={} field={} reason={}", e.key(), ex.field(), ex.getMessage());
                continue;
            }
            LeaseAttrs a = NOT_OURS;
            if (e.value().contains(publicIp)) {
                try {
                    a = LeaseValueCodec.parse(e.key(), e.value());
                } catch (ConfigException ex) {
                    LOG.warn("lease skipped key={} field={} reason={}", e.key(), ex.field(), ex.getMessage());
                }
            }
            out.add(new Known(e, s, a));
        }
        return out;
    }

    private Instant expiration() {
        return clock.instant().plus(timings.leaseTtl());
    }
}
