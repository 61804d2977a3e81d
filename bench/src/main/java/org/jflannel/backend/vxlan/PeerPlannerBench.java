package org.jflannel.backend.vxlan;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jflannel.bench.Leases;
import org.jflannel.core.Lease;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.infra.Blackhole;

/**
 * The VXLAN {@code PeerPlanner} (package-private, so this benchmark sits in its package) turning
 * 2,000 peer leases into neighbour + FDB + onlink route plans, as at start-up of a node in a
 * 2,000-node cluster. IPv4 only, no DirectRouting (kube-flannel's defaults).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
public class PeerPlannerBench {
    private List<Lease> leases;
    private PeerPlanner planner;

    @Setup
    public void setUp() {
        leases = Leases.all(Leases.NODES, 0);
        planner = new PeerPlanner(4, 0, false, ip -> false);
        for (Lease l : leases) {
            if (!(planner.plan(l) instanceof PeerPlanner.Planned)) {
                throw new IllegalStateException("fixture lease not planned: " + planner.plan(l));
            }
        }
    }

    @Benchmark
    public void plan2000Peers(Blackhole bh) {
        for (Lease l : leases) {
            bh.consume(planner.plan(l));
        }
    }
}
