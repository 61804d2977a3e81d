package org.jflannel.subnet.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jflannel.core.Ip4Net;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseAttrs;
import org.jflannel.core.LeaseEvent;
import org.jflannel.subnet.SubnetManagerContract.Recorder;
import org.jflannel.testsupport.etcd.EtcdExtension;
import org.jflannel.testsupport.etcd.EtcdProcess;
import org.jflannel.testsupport.etcd.TcpProxy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.slf4j.LoggerFactory;

/** etcd going away, compacting and racing, against a real etcd. */
@Tag("etcd")
@ExtendWith(EtcdExtension.class)
class EtcdFaultsIT {
    private static final Duration WAIT = Duration.ofSeconds(60);
    private static final String CONFIG = EtcdSubnetManagerContractIT.CONFIG;

    private final EtcdProcess etcd;
    private final List<AutoCloseable> toClose = new ArrayList<>();
    private final ListAppender<ILoggingEvent> watchLog = new ListAppender<>();
    private EtcdAdmin admin;

    EtcdFaultsIT(EtcdProcess etcd) {
        this.etcd = etcd;
    }

    @BeforeEach
    void setUp() throws Exception {
        watchLog.start();
        watchLogger().addAppender(watchLog);
        probeLogger().addAppender(watchLog);
        admin = new EtcdAdmin(etcd.endpoint(), "/jf-" + UUID.randomUUID());
        admin.putConfig(CONFIG);
    }

    @AfterEach
    void tearDown() throws Exception {
        for (int i = toClose.size() - 1; i >= 0; i--) {
            toClose.get(i).close();
        }
        admin.close();
        watchLogger().detachAppender(watchLog);
        probeLogger().detachAppender(watchLog);
    }

    @Test
    void watchResumesAfterEtcdIsDownFor20sAndNoEventIsLost() throws Exception {
        putPeer("10.42.200.0-24", "192.0.2.1", "0e:00:00:00:00:01");
        putPeer("10.42.201.0-24", "192.0.2.2", "0e:00:00:00:00:02");
        putPeer("10.42.202.0-24", "192.0.2.3", "0e:00:00:00:00:03");
        AtomicInteger lost = new AtomicInteger();
        EtcdSubnetManager m = manager(etcd.endpoint(), EtcdAdmin.TIMINGS, lost::incrementAndGet);
        m.acquireLease(attrs("192.0.2.10", "0e:00:00:00:00:10"));
        Recorder rec = watch(m);
        assertThat(rec.awaitBatches(1).get(0)).hasSize(4);

        admin.close();
        etcd.stop();
        long stoppedAt = System.nanoTime();
        try {
            // the watch probes etcd until it is back; wait until it has been waiting for 20 s
            Await.until(() -> unreachableForMillis("etcd-lease-watch") >= 20_000, WAIT, "20 s of probing");
        } finally {
            etcd.restart();
        }
        long downSeconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - stoppedAt);
        admin = new EtcdAdmin(etcd.endpoint(), admin.prefix);
        int before = rec.events().size();

        // written by a second client as soon as etcd is back, while our watch may still be backing off
        putPeer("10.42.200.0-24", "192.0.2.1", "0e:00:00:00:00:a1");
        admin.delete(admin.key("10.42.201.0-24"));
        putPeer("10.42.203.0-24", "192.0.2.4", "0e:00:00:00:00:04");
        admin.expire(admin.key("10.42.202.0-24"));

        rec.awaitTrue(() -> rec.events().size() >= before + 4, "the four changes made after the restart");
        List<String> after = rec.events().subList(before, rec.events().size()).stream().map(EtcdFaultsIT::describe).toList();
        assertThat(after).containsExactly(
                "ADDED 10.42.200.0/24 0e:00:00:00:00:a1",
                "REMOVED 10.42.201.0/24 0e:00:00:00:00:02",
                "ADDED 10.42.203.0/24 0e:00:00:00:00:04",
                "REMOVED 10.42.202.0/24 0e:00:00:00:00:03");
        assertThat(downSeconds).as("etcd was down long enough to exercise the back-off").isGreaterThanOrEqualTo(20);
        assertThat(lost).hasValue(0);
        assertThat(rec.threadNames()).containsExactly("etcd-lease-watch");
    }

    /**
     * Issue 23: a node started while etcd is down keeps probing it; once etcd returns it gets its config and
     * lease, and a running peer's watch delivers that lease; the peer's watch removes nothing meanwhile.
     * (How fast is the benchmark's business: bench/flanneld-etcd-outage.py.)
     */
    @Test
    void nodeStartedDuringAnOutageJoinsAfterEtcdReturnsAndNothingIsRemoved() throws Exception {
        putPeer("10.42.200.0-24", "192.0.2.1", "0e:00:00:00:00:01");
        putPeer("10.42.201.0-24", "192.0.2.2", "0e:00:00:00:00:02");
        AtomicInteger lost = new AtomicInteger();
        EtcdSubnetManager peer = manager(etcd.endpoint(), EtcdAdmin.TIMINGS, lost::incrementAndGet);
        peer.acquireLease(attrs("192.0.2.10", "0e:00:00:00:00:10"));
        Recorder rec = watch(peer);
        assertThat(rec.awaitBatches(1).get(0)).hasSize(3);

        admin.close();
        etcd.stop();
        EtcdSubnetManager joining = manager(etcd.endpoint(), EtcdAdmin.TIMINGS, () -> { });
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try {
            // as the daemon starts: the config, retried until it comes, then the lease
            Future<Lease> joined = pool.submit(() -> {
                while (true) {
                    try {
                        joining.networkConfig();
                        return joining.acquireLease(attrs("192.0.2.11", "0e:00:00:00:00:11"));
                    } catch (java.io.IOException e) {
                        if (Thread.currentThread().isInterrupted()) {
                            throw e;
                        }
                    }
                }
            });
            try {
                Await.until(() -> count("etcd unreachable, probing who=etcd-subnet-manager") >= 1
                        && count("etcd unreachable, probing who=etcd-lease-watch") >= 1, WAIT,
                        "the joining node and the peer's watch both found etcd down");
                assertThat(joined).isNotDone();
            } finally {
                etcd.restart();
            }
            admin = new EtcdAdmin(etcd.endpoint(), admin.prefix);
            Lease lease = joined.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            rec.await(e -> e.type() == LeaseEvent.Type.ADDED && e.lease().sameSubnets(lease));
            assertThat(admin.get(admin.key(lease.key()))).isPresent();
        } finally {
            pool.shutdownNow();
        }
        assertThat(count("etcd reachable again who=etcd-lease-watch")).isGreaterThanOrEqualTo(1);
        assertThat(rec.events()).noneMatch(e -> e.type() == LeaseEvent.Type.REMOVED);
        assertThat(lost).hasValue(0);
    }

    @Test
    void compactionWhileDisconnectedIsRepairedByListingAndDiffing() throws Exception {
        BehindProxy f = twoPeersBehindAProxy(Duration.ofSeconds(5));
        Recorder rec = watch(f.manager());
        assertThat(rec.awaitBatches(1).get(0)).hasSize(3);

        f.proxy().cut();
        Await.until(() -> count("etcd lease watch interrupted") >= 1, WAIT, "the watch noticed the cut");
        int before = rec.events().size();
        admin.delete(admin.key("10.42.200.0-24"));
        putPeer("10.42.201.0-24", "192.0.2.2", "0e:00:00:00:00:b2");
        putPeer("10.42.202.0-24", "192.0.2.3", "0e:00:00:00:00:03");
        putPeer("10.42.202.0-24", "192.0.2.3", "0e:00:00:00:00:c3");
        admin.compact(admin.revision());
        f.proxy().resume();

        rec.awaitTrue(() -> rec.events().size() >= before + 3, "the diff after re-listing");
        List<String> diff = rec.events().subList(before, rec.events().size()).stream().map(EtcdFaultsIT::describe).toList();
        assertThat(diff).containsExactlyInAnyOrder(
                "REMOVED 10.42.200.0/24 0e:00:00:00:00:01",
                "ADDED 10.42.201.0/24 0e:00:00:00:00:b2",
                "ADDED 10.42.202.0/24 0e:00:00:00:00:c3");
        assertThat(count("fell behind compaction")).isGreaterThanOrEqualTo(1);
        assertThat(rec.events()).noneMatch(e -> e.type() == LeaseEvent.Type.REMOVED && e.lease().sameSubnets(f.own()));
        assertThat(f.lost()).hasValue(0);
    }

    /**
     * Session 13: a lease watch whose connection breaks while etcd's port still accepts TCP (a load balancer in front of
     * a failing etcd; here {@link TcpProxy#reject()}: every connection reset once it sends) subscribes again on a channel that
     * cannot connect. It must see each failed attempt itself, well before the call timeout (30 s here), and resume with
     * the changes made meanwhile once etcd answers. Before, its watch call (jetcd waits for the channel to be ready)
     * sat until the call timeout: one interruption logged, then nothing for 30 s (10 s with the daemon's timings).
     */
    @Test
    void watchThatCannotResubscribeNoticesEachFailureWellBeforeTheCallTimeout() throws Exception {
        BehindProxy f = twoPeersBehindAProxy(Duration.ofSeconds(30));
        Recorder rec = watch(f.manager());
        assertThat(rec.awaitBatches(1).get(0)).hasSize(3);

        long before = countOn("etcd-lease-watch", "etcd lease watch interrupted");
        f.proxy().reject();
        // a third of the call timeout: the old watch logged its first failure and then waited out the 30 s
        Await.until(() -> countOn("etcd-lease-watch", "etcd lease watch interrupted") >= before + 3, Duration.ofSeconds(10),
                "the lease watch noticed the break and two failed attempts to watch again (a third of the call timeout)");
        assertThat(f.proxy().rejections()).as("the watch's attempts reached etcd's port").isNotEmpty();

        resumesWithTheChangesMadeMeanwhile(f, rec, "the changes made while the watch could not connect");
    }

    /**
     * Session 13, the case seen in CI (a 5-s stall of {@link #compactionWhileDisconnectedIsRepairedByListingAndDiffing}):
     * etcd goes away (connections closed, port refused) after the first watch's client listed ahead (the prefetch) and
     * before the watch subscribes on it, as when a daemon loses etcd while it sets up its backend. The watch delivers
     * the prefetched snapshot, subscribes on that client, must notice the failure well before the call timeout (30 s
     * here) and, once etcd is back, resume with the changes made meanwhile. Before, the subscription waited for the
     * channel to reconnect until the call timeout ({@code watch not established within 30000 ms}).
     */
    @Test
    void watchSubscribingAfterEtcdWentAwayNoticesWellBeforeTheCallTimeout() throws Exception {
        ch.qos.logback.classic.Logger prefetchLogger = (Logger) LoggerFactory.getLogger(WatchPrefetch.class);
        prefetchLogger.addAppender(watchLog);
        prefetchLogger.setLevel(ch.qos.logback.classic.Level.DEBUG); // its lines are debug ones
        toClose.add(() -> {
            prefetchLogger.detachAppender(watchLog);
            prefetchLogger.setLevel(null);
        });
        BehindProxy f = twoPeersBehindAProxy(Duration.ofSeconds(30));
        Await.until(() -> count("etcd watch prefetch listed") == 1, WAIT, "the first watch's client listed ahead");

        f.proxy().cut();
        Recorder rec = watch(f.manager());
        assertThat(rec.awaitBatches(1).get(0)).as("the prefetched snapshot").hasSize(3);
        // a third of the call timeout
        Await.until(() -> countOn("etcd-lease-watch", "etcd lease watch interrupted") >= 1, Duration.ofSeconds(10),
                "the lease watch noticed that its subscription failed (a third of the call timeout)");
        assertThat(count("etcd watch prefetch not done")).as("the watch took the prefetch's client").isZero();

        resumesWithTheChangesMadeMeanwhile(f, rec, "the changes made while etcd was away");
    }

    /**
     * While the watch cannot reach etcd: a peer removed and one added; then etcd back. The watch must deliver exactly
     * those two changes, never by waiting out a call timeout, never reporting our own lease gone.
     */
    private void resumesWithTheChangesMadeMeanwhile(BehindProxy f, Recorder rec, String what) throws Exception {
        int seen = rec.events().size();
        admin.delete(admin.key("10.42.200.0-24"));
        putPeer("10.42.202.0-24", "192.0.2.3", "0e:00:00:00:00:03");
        f.proxy().resume();
        rec.awaitTrue(() -> rec.events().size() >= seen + 2, what);
        assertThat(rec.events().subList(seen, rec.events().size()).stream().map(EtcdFaultsIT::describe).toList())
                .containsExactly("REMOVED 10.42.200.0/24 0e:00:00:00:00:01", "ADDED 10.42.202.0/24 0e:00:00:00:00:03");
        assertThat(countOn("etcd-lease-watch", "watch not established within")).as("no attempt waited out the call timeout")
                .isZero();
        assertThat(rec.events()).noneMatch(e -> e.type() == LeaseEvent.Type.REMOVED && e.lease().sameSubnets(f.own()));
        assertThat(f.lost()).hasValue(0);
    }

    @Test
    void eightManagersRacingForFewSubnetsAllGetDistinctOnes() throws Exception {
        // 10.9.0.0/24 in /28s: 15 allocatable subnets for 8 nodes, so random choices collide
        admin.putConfig("{\"Network\":\"10.9.0.0/24\",\"SubnetLen\":28,\"Backend\":{\"Type\":\"vxlan\"}}");
        int n = 8;
        List<EtcdSubnetManager> managers = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            managers.add(manager(etcd.endpoint(), EtcdAdmin.TIMINGS, () -> { }));
        }
        ExecutorService pool = Executors.newFixedThreadPool(n);
        try {
            CountDownLatch go = new CountDownLatch(1);
            List<Future<Lease>> results = new ArrayList<>();
            for (int i = 0; i < n; i++) {
                EtcdSubnetManager m = managers.get(i);
                LeaseAttrs a = attrs("192.0.2." + (20 + i), "0e:00:00:00:01:" + (10 + i));
                results.add(pool.submit(() -> {
                    go.await();
                    return m.acquireLease(a);
                }));
            }
            go.countDown();
            Set<Ip4Net> subnets = new HashSet<>();
            for (Future<Lease> f : results) {
                subnets.add(f.get(WAIT.toSeconds(), TimeUnit.SECONDS).subnet());
            }
            assertThat(subnets).hasSize(n);
            assertThat(admin.listKeys()).hasSize(n);
        } finally {
            pool.shutdownNow();
        }
    }

    /** Two peers' leases in etcd; a manager (call timeout as given) reaching etcd through a proxy, with our lease. */
    private record BehindProxy(TcpProxy proxy, EtcdSubnetManager manager, Lease own, AtomicInteger lost) {
    }

    private BehindProxy twoPeersBehindAProxy(Duration callTimeout) throws Exception {
        putPeer("10.42.200.0-24", "192.0.2.1", "0e:00:00:00:00:01");
        putPeer("10.42.201.0-24", "192.0.2.2", "0e:00:00:00:00:02");
        TcpProxy proxy = TcpProxy.start(etcd.clientPort());
        toClose.add(proxy);
        AtomicInteger lost = new AtomicInteger();
        EtcdTimings timings = new EtcdTimings(Duration.ofHours(24), Duration.ofMinutes(60), Duration.ofSeconds(1),
                Duration.ofMillis(100), Duration.ofMillis(500), callTimeout);
        EtcdSubnetManager m = manager(proxy.endpoint(), timings, lost::incrementAndGet);
        return new BehindProxy(proxy, m, m.acquireLease(attrs("192.0.2.10", "0e:00:00:00:00:10")), lost);
    }

    private static String describe(LeaseEvent e) {
        String data = e.lease().attrs().backendData();
        String mac = data == null ? "?" : data.replaceAll(".*\"VtepMAC\":\"([^\"]+)\".*", "$1");
        return e.type() + " " + e.lease().subnet() + " " + mac;
    }

    /** The longest wait for an unreachable etcd that {@code who} has logged so far (logged every 10 s). */
    private long unreachableForMillis(String who) {
        Pattern p = Pattern.compile("etcd still unreachable who=" + who + " waitedMs=(\\d+)");
        synchronized (watchLog) {
            return List.copyOf(watchLog.list).stream().map(l -> p.matcher(l.getFormattedMessage()))
                    .filter(Matcher::find).mapToLong(m -> Long.parseLong(m.group(1))).max().orElse(0);
        }
    }

    /** Log lines containing {@code text} written by the thread {@code thread}. */
    private long countOn(String thread, String text) {
        synchronized (watchLog) {
            return List.copyOf(watchLog.list).stream()
                    .filter(l -> l.getThreadName().equals(thread) && l.getFormattedMessage().contains(text)).count();
        }
    }

    private long count(String text) {
        synchronized (watchLog) {
            return List.copyOf(watchLog.list).stream().filter(l -> l.getFormattedMessage().contains(text)).count();
        }
    }

    private void putPeer(String leaseKey, String ip, String mac) throws Exception {
        admin.putLeased(admin.key(leaseKey), EtcdAdmin.upstreamValue(ip, "{\"VNI\":1,\"VtepMAC\":\"" + mac + "\"}"));
    }

    private EtcdSubnetManager manager(String endpoint, EtcdTimings timings, Runnable onLost) throws Exception {
        EtcdSubnetManager m = new EtcdSubnetManager(admin.options(endpoint), null, null, timings, onLost);
        toClose.add(m);
        return m;
    }

    private Recorder watch(EtcdSubnetManager m) {
        Recorder rec = new Recorder();
        toClose.add(m.watchLeases(rec));
        return rec;
    }

    static LeaseAttrs attrs(String ip, String mac) throws Exception {
        return new LeaseAttrs((java.net.Inet4Address) InetAddress.getByName(ip), null, "vxlan",
                "{\"VNI\":1,\"VtepMAC\":\"" + mac + "\"}", null);
    }

    private static Logger probeLogger() {
        return (Logger) LoggerFactory.getLogger(EtcdProbe.class);
    }

    private static Logger watchLogger() {
        return (Logger) LoggerFactory.getLogger(LeaseWatch.class);
    }
}
