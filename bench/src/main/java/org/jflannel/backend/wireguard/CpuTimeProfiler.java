package org.jflannel.backend.wireguard;

import java.lang.management.ManagementFactory;
import java.util.List;
import org.openjdk.jmh.infra.BenchmarkParams;
import org.openjdk.jmh.infra.IterationParams;
import org.openjdk.jmh.profile.InternalProfiler;
import org.openjdk.jmh.results.AggregationPolicy;
import org.openjdk.jmh.results.IterationResult;
import org.openjdk.jmh.results.Result;
import org.openjdk.jmh.results.ScalarResult;

/**
 * CPU time per operation ({@code -prof org.jflannel.backend.wireguard.CpuTimeProfiler}): the forked
 * JVM's process CPU time over each iteration divided by its operations. On the shared 2-CPU machine
 * a single-threaded benchmark's wall-clock score falls with the load (the thread waits for a CPU);
 * its CPU time per operation does not, so this is the figure to compare across runs. It includes
 * the JIT and GC threads' time, which after warm-up is small.
 */
public final class CpuTimeProfiler implements InternalProfiler {
    private final com.sun.management.OperatingSystemMXBean os =
            (com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean();
    private long start;

    @Override
    public String getDescription() {
        return "process CPU time per operation";
    }

    @Override
    public void beforeIteration(BenchmarkParams benchmarkParams, IterationParams iterationParams) {
        start = os.getProcessCpuTime();
    }

    @Override
    public List<? extends Result> afterIteration(BenchmarkParams benchmarkParams, IterationParams iterationParams,
            IterationResult result) {
        long cpu = os.getProcessCpuTime() - start;
        long ops = Math.max(1, result.getMetadata().getMeasuredOps());
        return List.of(new ScalarResult("cpu.ns/op", (double) cpu / ops, "ns/op", AggregationPolicy.AVG));
    }
}
