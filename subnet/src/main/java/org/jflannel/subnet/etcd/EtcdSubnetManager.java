package org.jflannel.subnet.etcd;

import java.io.IOException;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.random.RandomGenerator;
import org.jflannel.core.ConfigException;
import org.jflannel.core.Ip4Net;
import org.jflannel.core.Ip6Net;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseAttrs;
import org.jflannel.core.LeaseEvent;
import org.jflannel.core.NetConf;
import org.jflannel.core.SubnetManager;
import org.jflannel.core.Subscription;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The etcd lease source (REFERENCE §5), wire-compatible with upstream flanneld: the config at
 * {@code <prefix>/config}, leases at {@code <prefix>/subnets/<a.b.c.d-NN>[&<v6>-NN]} with 24 h etcd
 * leases, renewed before expiry; peers streamed by {@link #watchLeases}.
 *
 * <p>Wiring in the daemon: {@code new EtcdSubnetManager(options, previousSubnet, previousIpv6Subnet,
 * EtcdTimings.defaults(renewMarginMinutes), onLeaseLost)}; {@code onLeaseLost} runs once, on a watch
 * thread, when the own lease key is deleted or expires (the daemon then logs
 * {@code Lease has been revoked. Shutting down daemon.} and exits 0).
 *
 * <p>Owns: a jetcd client (plus one per watch), the threads {@code etcd-watch-prefetch} (until the first watch has
 * its listing, {@link WatchPrefetch}), {@code etcd-lease-renew}, {@code etcd-own-lease} and one
 * {@code etcd-lease-watch} per subscription; {@link #close()} stops them all.
 */
public final class EtcdSubnetManager implements SubnetManager {
    private static final Logger LOG = LoggerFactory.getLogger(EtcdSubnetManager.class);

    private final EtcdOptions options;
    private final EtcdTimings timings;
    private final Runnable onLeaseLost;
    private final Clock clock = Clock.systemUTC();
    private final EtcdStore store;
    private final LeaseAcquirer acquirer;
    private final LeaseRenewer renewer;
    private final List<Subscription> subscriptions = new ArrayList<>();
    private final EtcdProbe probe;
    private LeaseWatch ownLeaseWatch;
    /** The first lease watch's client and listing, made ahead (ours, issue 23); null once handed on or off. */
    private WatchPrefetch watchPrefetch;
    /** etcd was unreachable, or a call failed, since the client last worked: use a new client next time. */
    private boolean stale;

    /**
     * @param previousSubnet      {@code FLANNEL_SUBNET} of the previous subnet.env, or null
     * @param previousIpv6Subnet  {@code FLANNEL_IPV6_SUBNET} of the previous subnet.env, or null
     * @param onLeaseLost         called once when the own lease key is deleted or expires
     */
    public EtcdSubnetManager(EtcdOptions options, Ip4Net previousSubnet, Ip6Net previousIpv6Subnet,
                             EtcdTimings timings, Runnable onLeaseLost) throws IOException {
        this.options = Objects.requireNonNull(options, "options");
        this.timings = Objects.requireNonNull(timings, "timings");
        this.onLeaseLost = Objects.requireNonNull(onLeaseLost, "onLeaseLost");
        this.store = EtcdStore.open(options, timings.callTimeout(), false);
        this.probe = new EtcdProbe(options.endpoints(), timings.probeInterval());
        this.acquirer = new LeaseAcquirer(store, options, timings, clock, RandomGenerator.getDefault(),
                previousSubnet, previousIpv6Subnet);
        this.renewer = new LeaseRenewer(store, timings, clock);
        // the first lease watch's client connects now and lists once the own lease is written (issue 23)
        this.watchPrefetch = new WatchPrefetch(this::watchConnection, options.subnetsPrefix(), options.configKey()).start();
    }

    @Override
    public String name() {
        return "etcd";
    }

    /** {@code <prefix>/config}, parsed and validated as net-conf.json (etcd mode); errors name the key. */
    @Override
    public synchronized NetConf networkConfig() throws IOException, InterruptedException, ConfigException {
        String key = options.configKey();
        ready();
        EtcdStore.Entry e;
        try {
            e = store.get(key).orElseThrow(() -> new IOException(
                    "flannel config not found in etcd store. Did you create your config using etcdv3 API?"));
        } catch (IOException ex) {
            stale = true;
            throw ex;
        }
        NetConf conf = NetConf.parse(e.value(), NetConf.Mode.ETCD, key);
        if (conf.enableIPv4()) {
            acquirer.listAhead(); // the first acquisition's listing, while the daemon sets up the backend (issue 23)
        }
        return conf;
    }

    @Override
    public synchronized Lease acquireLease(LeaseAttrs attrs) throws IOException, InterruptedException, ConfigException {
        NetConf conf = networkConfig();
        LeaseAcquirer.Acquired a;
        try {
            a = acquirer.acquire(conf, attrs);
        } catch (IOException ex) {
            stale = true;
            throw ex;
        }
        if (watchPrefetch != null) {
            watchPrefetch.leaseAcquired();
        }
        renewer.cancel();
        if (!a.reservation()) {
            renewer.start(a.key(), a.value(), a.lease().expiration());
        }
        if (ownLeaseWatch != null) {
            ownLeaseWatch.close();
        }
        OwnLeaseGuard guard = new OwnLeaseGuard(a.key(), renewer, onLeaseLost);
        ownLeaseWatch = new LeaseWatch(this::watchConnection, probe, a.key(), a.key()::equals, guard, "etcd-own-lease",
                timings, clock, true).start();
        return a.lease();
    }

    /**
     * Ours (issue 23): before the start-up calls, waits (up to the call timeout) until etcd accepts
     * connections, probing it cheaply, and after an outage or a failed call moves to a new client, whose
     * channel connects at once instead of waiting out gRPC's reconnect back-off. A node started while etcd
     * is down so gets its config and lease ≤ 0.75 s after etcd returns, instead of up to ~10 s.
     */
    private void ready() throws IOException, InterruptedException {
        if (!probe.await(timings.callTimeout(), () -> false, "etcd-subnet-manager")) {
            stale = true;
            throw new IOException("etcd unreachable: no endpoint of " + options.endpoints()
                    + " accepted a connection within " + timings.callTimeout().toMillis() + " ms");
        }
        if (stale) {
            store.reconnect();
            stale = false;
        }
    }

    /** All leases under {@code <prefix>/subnets}, the own one included; see {@link SubnetManager#watchLeases}. */
    @Override
    public synchronized Subscription watchLeases(Consumer<List<LeaseEvent>> sink) {
        LeaseWatch w = new LeaseWatch(this::watchConnection, probe, options.subnetsPrefix(), key -> true, sink,
                "etcd-lease-watch", timings, clock, false).withPrefetch(watchPrefetch);
        watchPrefetch = null; // the first watch owns it now
        subscriptions.add(w);
        return w.start();
    }

    /**
     * Each watch has a client of its own, so that it can replace it without disturbing the others; its calls fail at
     * once while it cannot connect (session 13), so that a watch set up just as etcd goes away notices it then, not
     * at the call timeout.
     */
    private EtcdStore watchConnection() throws IOException {
        return EtcdStore.openFailFast(options, timings.callTimeout());
    }

    /** Nothing to do in etcd mode: the lease is complete once written. */
    @Override
    public void completeLease(Lease own) {
    }

    @Override
    public synchronized void close() {
        subscriptions.forEach(Subscription::close);
        subscriptions.clear();
        if (watchPrefetch != null) {
            watchPrefetch.close();
            watchPrefetch = null;
        }
        if (ownLeaseWatch != null) {
            ownLeaseWatch.close();
        }
        renewer.close();
        store.close();
        LOG.debug("etcd subnet manager closed prefix={}", options.prefix());
    }
}
