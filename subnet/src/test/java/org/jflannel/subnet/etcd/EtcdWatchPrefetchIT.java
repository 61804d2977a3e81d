package org.jflannel.subnet.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jflannel.core.Ip4Net;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseEvent;
import org.jflannel.testsupport.etcd.EtcdExtension;
import org.jflannel.testsupport.etcd.EtcdProcess;
import org.jflannel.testsupport.etcd.TcpProxy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Issue 23's {@link WatchPrefetch} when the daemon starts during an etcd outage (session 10's regression, fixed in
 * 3088571): the prefetch's client is built, and fails to connect, while etcd is away; its gRPC channel then backs off
 * its reconnects (1 s, ×1.6 after each failure, ±20 %, up to 2 min), and before the fix the first watch's listing
 * waited on that channel after etcd was back: a node started during a 30-s outage programmed its peers ~10 s after
 * etcd's return in 4 of 7 runs (docs/benchmarks.md, "Issue 23 on a quiet machine, session 10").
 *
 * <p>The benchmark hit it only when etcd happened to return early in one of the channel's long back-offs. Here etcd
 * returns right after one by construction: a {@link TcpProxy} in front of etcd resets (and so counts) every
 * connection during the outage, and opens just after the prefetch channel's 6th failed attempt, so that its next one
 * is ≥ 8.4 s away. The old code fails this test every time, the fixed one passes.
 */
@Tag("etcd")
@ExtendWith(EtcdExtension.class)
class EtcdWatchPrefetchIT {
    private static final Logger LOG = LoggerFactory.getLogger(EtcdWatchPrefetchIT.class);
    private static final Duration WAIT = Duration.ofSeconds(40);

    /**
     * The prefetch channel's failed connects to wait for before etcd returns. gRPC's back-off after the n-th failure
     * is 1.6^(n-1) s ±20 %: after the 6th, the next attempt is 8.4–12.6 s away (the 6th comes 12.6–19 s after the
     * first). Six also puts the 6th attempt after the prefetch's warm-up {@code get} gave up (the daemon's 10 s call
     * timeout), as in the benchmark's outage, so that the fixed code sees a client that never reached etcd.
     */
    private static final int FAILED_CONNECTS = 6;

    /**
     * How late after etcd's return the peer may reach the first watch. This bounds a behaviour (whether the listing
     * waits out a reconnect back-off), not a speed: the old code waited for the stale channel's next reconnect,
     * ≥ 8.4 s away by construction, or for the 10 s call timeout, whichever came first; the fixed code connects a new
     * client at once (0.4 s on a quiet machine, the config, the lease and the listing included). 4 s gives a loaded
     * CI machine ten times that, and lies 4.4 s under the old code's shortest wait, a timer that load can only
     * lengthen: no machine is fast enough for the old code to pass.
     */
    private static final Duration BOUND = Duration.ofSeconds(4);

    private final EtcdProcess etcd;
    private final List<AutoCloseable> toClose = new ArrayList<>();
    private final ListAppender<ILoggingEvent> prefetchLog = new ListAppender<>();
    private EtcdAdmin admin;

    EtcdWatchPrefetchIT(EtcdProcess etcd) {
        this.etcd = etcd;
    }

    @BeforeEach
    void setUp() throws Exception {
        prefetchLog.start();
        prefetchLogger().addAppender(prefetchLog);
        prefetchLogger().setLevel(Level.DEBUG); // its lines are debug ones
        admin = new EtcdAdmin(etcd.endpoint(), "/jf-" + UUID.randomUUID());
        admin.putConfig(EtcdSubnetManagerContractIT.CONFIG);
    }

    @AfterEach
    void tearDown() throws Exception {
        for (int i = toClose.size() - 1; i >= 0; i--) {
            toClose.get(i).close();
        }
        admin.close();
        prefetchLogger().detachAppender(prefetchLog);
        prefetchLogger().setLevel(null);
    }

    @Test
    void nodeStartedDuringAnOutageListsItsPeersPromptlyOnceEtcdIsBack() throws Exception {
        warmUp();
        admin.putLeased(admin.key("10.42.200.0-24"),
                EtcdAdmin.upstreamValue("192.0.2.20", "{\"VNI\":1,\"VtepMAC\":\"0e:00:00:00:00:20\"}"));
        TcpProxy proxy = TcpProxy.start(etcd.clientPort());
        toClose.add(proxy);
        // etcd is "down" from before the node starts: every connection is reset as it is accepted, and counted
        proxy.reject();

        // as the daemon builds it: its timings (10 s call timeout); the prefetch's client starts connecting now
        EtcdSubnetManager m = new EtcdSubnetManager(admin.options(proxy.endpoint()), null, null,
                EtcdTimings.defaults(60), () -> { });
        toClose.add(m);
        // Nothing else of the node talks to etcd before its return (a daemon's own calls wait on its TCP probe
        // during an outage, sending nothing; here they come after it), so each reset connection is one of the
        // prefetch channel's attempts, as the back-off check below confirms.
        Await.until(() -> proxy.rejections().size() >= FAILED_CONNECTS, WAIT,
                FAILED_CONNECTS + " failed connects of the prefetch's client");
        long warmUpFailed = count("etcd watch prefetch: connecting failed");
        proxy.resume();
        long back = System.nanoTime();
        List<Long> attempts = proxy.rejections();

        // the daemon's start-up once etcd answers: the config, the own lease, then the subscription
        m.networkConfig();
        Lease own = m.acquireLease(EtcdFaultsIT.attrs("192.0.2.10", "0e:00:00:00:00:10"));
        long acquired = System.nanoTime();
        CompletableFuture<List<LeaseEvent>> snapshot = new CompletableFuture<>();
        CompletableFuture<Long> snapshotAt = new CompletableFuture<>();
        toClose.add(m.watchLeases(batch -> {
            snapshotAt.complete(System.nanoTime());
            snapshot.complete(List.copyOf(batch));
        }));
        List<LeaseEvent> first = snapshot.get(WAIT.toSeconds(), TimeUnit.SECONDS);
        long late = snapshotAt.get() - back;

        LOG.info("prefetch outage: connect attempts at ms={} (after the first), lease acquired {} ms and peers "
                        + "delivered {} ms after etcd's return", attempts.stream()
                        .map(t -> (t - attempts.get(0)) / 1_000_000).toList(),
                (acquired - back) / 1_000_000, late / 1_000_000);
        assertThat(first).extracting(e -> e.lease().subnet())
                .containsExactlyInAnyOrder(own.subnet(), Ip4Net.parse("10.42.200.0/24"));
        // the set-up really was the regression's: a prefetch client that never reached etcd, in a long back-off
        assertThat(warmUpFailed).as("the prefetch's warm-up get failed during the outage").isEqualTo(1);
        assertThat(attempts.get(FAILED_CONNECTS - 1) - attempts.get(FAILED_CONNECTS - 2))
                .as("the prefetch channel's last back-off before etcd's return, ns (1.6^4 s ±20 %%)")
                .isGreaterThan(TimeUnit.SECONDS.toNanos(4));
        assertThat(Duration.ofNanos(late)).as("peers delivered to the first watch after etcd's return")
                .isLessThanOrEqualTo(BOUND);
        // ... and through the prefetch, on a new client: not by the watch giving up on it after its wait
        assertThat(count("etcd watch prefetch listed")).as("the prefetch listed").isEqualTo(1);
        assertThat(count("etcd watch prefetch not done")).as("the watch gave up waiting for the prefetch").isZero();
    }

    /**
     * One node start on a prefix of its own, etcd up: loads and compiles what the measured start runs after etcd's
     * return (jetcd's calls, Vert.x, our lease code), so that the bound is not spent on class loading. The daemon
     * has those in its AppCDS archive.
     */
    private void warmUp() throws Exception {
        try (EtcdAdmin other = new EtcdAdmin(etcd.endpoint(), "/jf-warm-" + UUID.randomUUID());
             EtcdSubnetManager m = new EtcdSubnetManager(other.options(etcd.endpoint()), null, null,
                     EtcdTimings.defaults(60), () -> { })) {
            other.putConfig(EtcdSubnetManagerContractIT.CONFIG);
            m.networkConfig();
            m.acquireLease(EtcdFaultsIT.attrs("192.0.2.9", "0e:00:00:00:00:09"));
            CompletableFuture<List<LeaseEvent>> snapshot = new CompletableFuture<>();
            try (var sub = m.watchLeases(snapshot::complete)) {
                snapshot.get(WAIT.toSeconds(), TimeUnit.SECONDS);
            }
        }
        synchronized (prefetchLog) {
            prefetchLog.list.clear();
        }
    }

    private long count(String text) {
        synchronized (prefetchLog) {
            return List.copyOf(prefetchLog.list).stream().filter(l -> l.getFormattedMessage().contains(text)).count();
        }
    }

    private static ch.qos.logback.classic.Logger prefetchLogger() {
        return (ch.qos.logback.classic.Logger) LoggerFactory.getLogger(WatchPrefetch.class);
    }
}
