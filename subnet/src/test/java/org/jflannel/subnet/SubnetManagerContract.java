package org.jflannel.subnet;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseAttrs;
import org.jflannel.core.LeaseEvent;
import org.jflannel.core.LeaseWatcher;
import org.jflannel.core.SubnetManager;
import org.jflannel.core.Subscription;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * The behaviour every {@link SubnetManager} owes the daemon, run against each implementation
 * (kube on fabric8's mock server, etcd on a real etcd). A subclass supplies a {@link StoreFixture}
 * that creates managers and plays the upstream nodes by writing their leases into the backing store.
 */
public abstract class SubnetManagerContract {
    protected static final Duration WAIT = Duration.ofSeconds(20);
    protected static final String OWN_NODE = "node-own";
    protected static final Inet4Address OWN_IP = ip("192.0.2.10");

    /** The backing store of one implementation, fresh per test (own namespace, prefix or server). */
    public interface StoreFixture extends AutoCloseable {
        /** A manager for node {@code nodeName} with public IP {@code publicIp}; the network config is in place. */
        SubnetManager newManager(String nodeName, Inet4Address publicIp) throws Exception;

        /**
         * Adds or changes peer {@code nodeName}'s lease exactly as an upstream flanneld (or Kubernetes) writes
         * it, with vxlan backend data {@code backendData}; a peer keeps its subnet across changes.
         * Returns the lease the manager is expected to report.
         */
        Lease putPeer(String nodeName, Inet4Address publicIp, String backendData) throws Exception;

        /** Removes peer {@code nodeName}'s lease the way it goes away upstream. */
        void removePeer(String nodeName) throws Exception;

        /**
         * Writes a peer whose lease data is malformed in one field (its public IP, if any, is
         * {@link #MALFORMED_PEER_IP}); says what its log line must name.
         */
        Malformed putMalformedPeer(String nodeName) throws Exception;

        @Override
        void close() throws Exception;
    }

    /** Which subject (etcd key or node name) and which field the skip log line must name. */
    public record Malformed(String subject, String field) {}

    protected abstract StoreFixture openFixture() throws Exception;

    protected StoreFixture store;
    private final List<AutoCloseable> toClose = new ArrayList<>();
    private ListAppender<ILoggingEvent> logs;

    @BeforeEach
    void openStore() throws Exception {
        logs = new ListAppender<>();
        logs.start();
        root().addAppender(logs);
        store = openFixture();
    }

    @AfterEach
    void closeStore() throws Exception {
        for (int i = toClose.size() - 1; i >= 0; i--) {
            toClose.get(i).close();
        }
        store.close();
        root().detachAppender(logs);
    }

    @Test
    void acquiringTwiceGivesTheSameLease() throws Exception {
        SubnetManager first = manager(OWN_NODE, OWN_IP);
        Lease a = first.acquireLease(ownAttrs("0e:00:00:00:00:01"));
        Lease again = first.acquireLease(ownAttrs("0e:00:00:00:00:01"));
        first.close();
        Lease afterRestart = manager(OWN_NODE, OWN_IP).acquireLease(ownAttrs("0e:00:00:00:00:01"));

        assertThat(again.sameSubnets(a)).as("%s vs %s", again, a).isTrue();
        assertThat(afterRestart.sameSubnets(a)).as("%s vs %s", afterRestart, a).isTrue();
        assertThat(a.attrs().publicIp()).isEqualTo(OWN_IP);
    }

    @Test
    void snapshotComesFirstAndHoldsExistingPeers() throws Exception {
        Lease peer = store.putPeer("node-a", ip("192.0.2.21"), vxlanData("0e:00:00:00:00:21"));
        SubnetManager m = manager(OWN_NODE, OWN_IP);
        m.acquireLease(ownAttrs("0e:00:00:00:00:01"));
        Recorder rec = watch(m);

        List<LeaseEvent> snapshot = rec.awaitBatches(1).get(0);
        assertThat(snapshot).allMatch(e -> e.type() == LeaseEvent.Type.ADDED);
        assertThat(snapshot).anyMatch(e -> e.lease().sameSubnets(peer) && e.lease().attrs().equals(peer.attrs()));
    }

    @Test
    void peerAddedChangedAndRemovedIsSeenInOrder() throws Exception {
        SubnetManager m = manager(OWN_NODE, OWN_IP);
        m.acquireLease(ownAttrs("0e:00:00:00:00:01"));
        Recorder rec = watch(m);
        rec.awaitBatches(1);

        Lease added = store.putPeer("node-b", ip("192.0.2.22"), vxlanData("0e:00:00:00:00:22"));
        rec.await(e -> e.type() == LeaseEvent.Type.ADDED && e.lease().attrs().equals(added.attrs()));
        Lease changed = store.putPeer("node-b", ip("192.0.2.22"), vxlanData("0e:00:00:00:00:23"));
        rec.await(e -> e.type() == LeaseEvent.Type.ADDED && e.lease().attrs().equals(changed.attrs()));
        store.removePeer("node-b");
        rec.await(e -> e.type() == LeaseEvent.Type.REMOVED && e.lease().sameSubnets(added));

        List<LeaseEvent> forPeer = rec.events().stream().filter(e -> e.lease().sameSubnets(added)).toList();
        assertThat(forPeer).extracting(LeaseEvent::type)
                .containsExactly(LeaseEvent.Type.ADDED, LeaseEvent.Type.ADDED, LeaseEvent.Type.REMOVED);
        assertThat(forPeer.get(0).lease().attrs()).isEqualTo(added.attrs());
        assertThat(forPeer.get(1).lease().attrs()).isEqualTo(changed.attrs());
        assertThat(changed.sameSubnets(added)).isTrue();
        assertThat(rec.threadNames()).hasSize(1).doesNotContain(Thread.currentThread().getName());
    }

    @Test
    void ownLeaseIsIdentifiableAndNeverMistakenForAPeer() throws Exception {
        SubnetManager m = manager(OWN_NODE, OWN_IP);
        Lease own = m.acquireLease(ownAttrs("0e:00:00:00:00:01"));
        Recorder rec = watch(m);
        Lease peer = store.putPeer("node-c", ip("192.0.2.23"), vxlanData("0e:00:00:00:00:24"));
        rec.await(e -> e.lease().sameSubnets(peer));

        assertThat(peer.sameSubnets(own)).isFalse();
        assertThat(rec.events()).filteredOn(e -> e.lease().sameSubnets(own))
                .allMatch(e -> OWN_IP.equals(e.lease().attrs().publicIp()));
        assertThat(rec.events()).filteredOn(e -> !e.lease().sameSubnets(own))
                .noneMatch(e -> OWN_IP.equals(e.lease().attrs().publicIp()));
    }

    @Test
    void ownLeaseIsFilteredByTheLeaseWatcherEvenWhenItChanges() throws Exception {
        SubnetManager m = manager(OWN_NODE, OWN_IP);
        Lease own = m.acquireLease(ownAttrs("0e:00:00:00:00:01"));
        Recorder rec = watch(m);
        rec.awaitBatches(1);
        m.acquireLease(ownAttrs("0e:00:00:00:00:02")); // the own lease is re-published with a new MAC
        // the SPI lets a manager include the own lease (etcd) or leave it out (kube); either way the
        // peer put after the re-publish arrives after any own-lease event
        Lease peer = store.putPeer("node-e", ip("192.0.2.25"), vxlanData("0e:00:00:00:00:26"));
        rec.await(e -> e.lease().sameSubnets(peer));

        // what the daemon does with the stream: the first batch resets the view, later ones update it
        LeaseWatcher watcher = new LeaseWatcher(own);
        List<List<LeaseEvent>> batches = rec.awaitBatches(1);
        List<LeaseEvent> out = new ArrayList<>(watcher.reset(batches.get(0).stream().map(LeaseEvent::lease).toList()));
        batches.subList(1, batches.size()).forEach(b -> out.addAll(watcher.update(b)));

        assertThat(out).noneMatch(e -> e.lease().sameSubnets(own));
        assertThat(out).anyMatch(e -> e.type() == LeaseEvent.Type.ADDED && e.lease().sameSubnets(peer));
    }

    @Test
    void malformedPeerIsSkippedWithALogLineWhileGoodPeersFlow() throws Exception {
        SubnetManager m = manager(OWN_NODE, OWN_IP);
        m.acquireLease(ownAttrs("0e:00:00:00:00:01"));
        Recorder rec = watch(m);
        rec.awaitBatches(1);

        Malformed bad = store.putMalformedPeer("node-bad");
        Lease good = store.putPeer("node-d", ip("192.0.2.24"), vxlanData("0e:00:00:00:00:25"));
        rec.await(e -> e.lease().sameSubnets(good) && e.lease().attrs().equals(good.attrs()));

        assertThat(logs.list).as("a log line naming %s and %s", bad.subject(), bad.field())
                .anyMatch(l -> l.getFormattedMessage().contains(bad.subject())
                        && l.getFormattedMessage().contains(bad.field()));
        assertThat(rec.events()).noneMatch(e -> MALFORMED_PEER_IP.equals(e.lease().attrs().publicIp()));
    }

    // ---- helpers for subclasses and tests ----

    /** A manager closed after the test. */
    protected SubnetManager manager(String node, Inet4Address publicIp) throws Exception {
        SubnetManager m = store.newManager(node, publicIp);
        toClose.add(m);
        return m;
    }

    protected Recorder watch(SubnetManager m) throws Exception {
        Recorder rec = new Recorder();
        Subscription s = m.watchLeases(rec);
        toClose.add(s);
        return rec;
    }

    /** The public IP a fixture's malformed peer may carry; the suite asserts it never shows up. */
    protected static final Inet4Address MALFORMED_PEER_IP = ip("192.0.2.99");

    protected static LeaseAttrs ownAttrs(String mac) {
        return new LeaseAttrs(OWN_IP, null, "vxlan", vxlanData(mac), null);
    }

    protected static String vxlanData(String mac) {
        return "{\"VNI\":1,\"VtepMAC\":\"" + mac + "\"}";
    }

    protected static Inet4Address ip(String text) {
        try {
            return (Inet4Address) InetAddress.getByName(text);
        } catch (UnknownHostException e) {
            throw new IllegalArgumentException(text, e);
        }
    }

    private static Logger root() {
        return (Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    }

    /** Records every batch with the thread that delivered it; bounded waits on what arrived. */
    public static final class Recorder implements java.util.function.Consumer<List<LeaseEvent>> {
        private final List<List<LeaseEvent>> batches = new ArrayList<>();
        private final List<String> threads = new ArrayList<>();

        @Override
        public synchronized void accept(List<LeaseEvent> batch) {
            batches.add(List.copyOf(batch));
            threads.add(Thread.currentThread().getName());
            notifyAll();
        }

        public synchronized List<LeaseEvent> events() {
            return batches.stream().flatMap(List::stream).toList();
        }

        public synchronized List<String> threadNames() {
            return threads.stream().distinct().toList();
        }

        public synchronized List<List<LeaseEvent>> awaitBatches(int n) throws InterruptedException {
            awaitTrue(() -> batches.size() >= n, "at least " + n + " batches");
            return List.copyOf(batches);
        }

        public synchronized LeaseEvent await(Predicate<LeaseEvent> p) throws InterruptedException {
            awaitTrue(() -> events().stream().anyMatch(p), "a matching lease event");
            return events().stream().filter(p).findFirst().orElseThrow();
        }

        /** Waits up to {@link #WAIT} for {@code cond}; fails the test with what arrived otherwise. */
        public synchronized void awaitTrue(java.util.function.BooleanSupplier cond, String what)
                throws InterruptedException {
            long deadline = System.nanoTime() + WAIT.toNanos();
            while (!cond.getAsBoolean()) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new AssertionError("no " + what + " within " + WAIT + "; got " + batches);
                }
                wait(Math.max(1, left / 1_000_000));
            }
        }
    }
}
