package org.jflannel.bench;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jflannel.core.LeaseEvent;
import org.jflannel.core.LeaseWatcher;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;

/**
 * {@code LeaseWatcher.update} with a batch of 2,000 lease events: the burst a watch delivers when a
 * large cluster's nodes (re)join. Each benchmark checks it got 2,000 events back, so a change that
 * makes the diff silently drop events fails instead of getting faster.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class LeaseWatcherBench {
    private List<LeaseEvent> generation0;
    private List<LeaseEvent> generation1;
    private LeaseWatcher steady;
    private boolean flip;

    @Setup
    public void setUp() {
        generation0 = Leases.added(Leases.all(Leases.NODES, 0));
        generation1 = Leases.added(Leases.all(Leases.NODES, 1));
        steady = new LeaseWatcher(Leases.own());
        steady.update(generation0);
    }

    /** 2,000 leases never seen: a fresh watcher, every event comes out as ADDED. */
    @Benchmark
    public List<LeaseEvent> newLeases() {
        return expect(new LeaseWatcher(Leases.own()).update(generation0));
    }

    /**
     * 2,000 known leases whose VTEP MAC changed (every node re-registered): the watcher holds 2,000
     * leases, each event replaces one and comes out as ADDED. Alternates between two generations.
     */
    @Benchmark
    public List<LeaseEvent> changedLeases() {
        flip = !flip;
        return expect(steady.update(flip ? generation1 : generation0));
    }

    private static List<LeaseEvent> expect(List<LeaseEvent> out) {
        if (out.size() != Leases.NODES) {
            throw new IllegalStateException("expected " + Leases.NODES + " events, got " + out.size());
        }
        return out;
    }
}
