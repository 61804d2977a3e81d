package org.jflannel.subnet.etcd;

import io.etcd.jetcd.ByteSequence;
import io.etcd.jetcd.Client;
import io.etcd.jetcd.options.PutOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.jflannel.core.LeaseEvent;
import org.jflannel.core.Subscription;
import org.jflannel.testsupport.etcd.EtcdProcess;

/**
 * Benchmark (not a test; run by {@code bench/etcd-watch.sh}): with N leases in a real etcd, the time
 * from start to the full snapshot delivered, then the time from the last of N further puts to the
 * last event delivered. Prints one result line.
 */
public final class EtcdWatchBench {
    private EtcdWatchBench() {
    }

    public static void main(String[] args) throws Exception {
        int n = args.length > 0 ? Integer.parseInt(args[0]) : 2000;
        try (EtcdProcess etcd = EtcdProcess.start();
             EtcdAdmin admin = new EtcdAdmin(etcd.endpoint(), "/bench");
             Client writer = Client.builder().endpoints(etcd.endpoint()).build()) {
            admin.putConfig("{\"Network\":\"10.0.0.0/8\",\"SubnetLen\":24,\"Backend\":{\"Type\":\"vxlan\"}}");
            putLeases(writer, admin, 1, n);

            Sink sink = new Sink();
            long t0 = System.nanoTime();
            try (EtcdSubnetManager m = new EtcdSubnetManager(admin.options(etcd.endpoint()), null, null,
                    EtcdTimings.defaults(60), () -> { });
                 Subscription s = m.watchLeases(sink)) {
                sink.awaitKeys(n, Duration.ofSeconds(120));
                long snapshotMs = ms(System.nanoTime() - t0);
                int snapshotBatchSize = sink.firstBatchSize();

                long p0 = System.nanoTime();
                long lastPutDone = putLeases(writer, admin, n + 1, n);
                sink.awaitKeys(2 * n, Duration.ofSeconds(120));
                long lastEvent = sink.lastEventNanos();
                // negative when the watch delivered the last event before the writer got its put acknowledged
                System.out.printf("etcd-watch leases=%d snapshot_ms=%d snapshot_batch=%d burst=%d burst_put_ms=%d"
                                + " burst_to_last_event_ms=%d last_event_after_last_put_ms=%d delivered=%d lost=%d%n",
                        n, snapshotMs, snapshotBatchSize, n, ms(lastPutDone - p0), ms(lastEvent - p0),
                        ms(lastEvent - lastPutDone), sink.keys(), 2 * n - sink.keys());
            }
        }
    }

    /** Puts {@code count} upstream-format leases, each with its own 24 h etcd lease, pipelined; returns when the last put was acknowledged. */
    private static long putLeases(Client writer, EtcdAdmin admin, int first, int count) throws Exception {
        List<CompletableFuture<?>> puts = new ArrayList<>(count);
        for (int i = first; i < first + count; i++) {
            String key = admin.key("10." + (i >> 8 & 0xff) + "." + (i & 0xff) + ".0-24");
            String value = EtcdAdmin.upstreamValue("192.168." + (i >> 8 & 0xff) + "." + (i & 0xff),
                    "{\"VNI\":1,\"VtepMAC\":\"0e:00:00:00:" + String.format("%02x:%02x", i >> 8 & 0xff, i & 0xff) + "\"}");
            puts.add(writer.getLeaseClient().grant(86400).thenCompose(g -> writer.getKVClient().put(
                    ByteSequence.from(key.getBytes()), ByteSequence.from(value.getBytes()),
                    PutOption.builder().withLeaseId(g.getID()).build())));
        }
        CompletableFuture.allOf(puts.toArray(CompletableFuture[]::new)).get(120, TimeUnit.SECONDS);
        return System.nanoTime();
    }

    private static long ms(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(nanos);
    }

    /** Counts distinct leases added and notes when the last event arrived. */
    private static final class Sink implements java.util.function.Consumer<List<LeaseEvent>> {
        private final Set<String> keys = new HashSet<>();
        private long lastEvent;
        private int firstBatch = -1;

        @Override
        public synchronized void accept(List<LeaseEvent> batch) {
            if (firstBatch < 0) {
                firstBatch = batch.size();
            }
            for (LeaseEvent e : batch) {
                if (e.type() == LeaseEvent.Type.ADDED) {
                    keys.add(e.lease().key());
                }
            }
            lastEvent = System.nanoTime();
            notifyAll();
        }

        synchronized void awaitKeys(int count, Duration bound) throws InterruptedException {
            long deadline = System.nanoTime() + bound.toNanos();
            while (keys.size() < count) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new IllegalStateException("only " + keys.size() + " of " + count + " leases within " + bound);
                }
                wait(Math.max(1, left / 1_000_000));
            }
        }

        synchronized int keys() {
            return keys.size();
        }

        synchronized long lastEventNanos() {
            return lastEvent;
        }

        synchronized int firstBatchSize() {
            return firstBatch;
        }
    }
}
