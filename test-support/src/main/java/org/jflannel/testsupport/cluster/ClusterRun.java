package org.jflannel.testsupport.cluster;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

/**
 * What every harness run is, whatever runs on its nodes: a run id (its namespaces are named after it),
 * a run directory claimed for {@link StaleRuns}, the namespaces and wires ({@link Topology}), the pods
 * attached to the nodes, and one teardown, run once: by {@link #close()}, by a start that failed, or by
 * the shutdown hook on Ctrl-C. The cluster that owns the run ({@link NetnsCluster},
 * {@link DaemonSetCluster}) gives the steps that end what it started; they run first, then the
 * namespaces and the run directory go.
 */
final class ClusterRun implements AutoCloseable {
    /** The owner's part of the teardown: each step through {@link Cleanup#attempt}. */
    interface Teardown {
        void steps(Cleanup cleanup);
    }

    /** How a pod namespace is attached on its node: returns the pod's IPv4 address. */
    interface Attach {
        String attach(String podNamespace) throws Exception;
    }

    /** How a pod namespace is attached on its node: returns the pod's addresses (IPv6 null when it has none). */
    interface AttachDual {
        Addresses attach(String podNamespace) throws Exception;
    }

    /** A pod's addresses from the CNI result: IPv4, and IPv6 (null when the result had none). */
    record Addresses(String ipv4, String ipv6) {
    }

    private final String label;
    private final ClusterNames names;
    private final Path runDir;
    private final Topology topology;
    private final Consumer<String> progress;
    private final List<Pod> pods = new ArrayList<>();
    private final AtomicBoolean closed = new AtomicBoolean();
    private final Thread shutdownHook;
    private volatile Teardown ownSteps = cleanup -> { };

    private ClusterRun(String label, ClusterNames names, Path runDir, Consumer<String> progress) {
        this.label = label;
        this.names = names;
        this.runDir = runDir;
        this.topology = new Topology(names, runDir);
        this.progress = progress;
        this.shutdownHook = new Thread(this::closeQuietly, label.replace(' ', '-') + "-cleanup");
    }

    /**
     * Sweeps what runs killed without cleanup left under {@code runBase}, then claims a new run
     * directory there, with its shutdown hook. {@code label} names the run in thread names and errors.
     */
    static ClusterRun open(String label, Path runBase, Consumer<String> progress) throws IOException {
        StaleRuns.sweep(runBase, progress);
        ClusterNames names = ClusterNames.random();
        Path runDir = Files.createDirectories(runBase.resolve("jflannel-" + names.id()));
        StaleRuns.claim(runDir);
        ClusterRun run = new ClusterRun(label, names, runDir, progress);
        Runtime.getRuntime().addShutdownHook(run.shutdownHook);
        return run;
    }

    /** What the owner ends before the namespaces go; set once, before {@link #boot}. */
    void teardownFirst(Teardown steps) {
        this.ownSteps = steps;
    }

    /** Runs the owner's start; when it fails, everything made so far is removed again and the failure rethrown. */
    void boot(Cleanup.Step start) throws Exception {
        try {
            start.run();
        } catch (Exception | Error e) {
            progress.accept("start failed: " + e.getMessage() + " — cleaning up");
            closeQuietly();
            throw e;
        }
    }

    ClusterNames names() {
        return names;
    }

    Path runDir() {
        return runDir;
    }

    Topology topology() {
        return topology;
    }

    void progress(String line) {
        progress.accept(line);
    }

    /**
     * Creates pod namespace {@code j} of node {@code node} (named {@code node1/pod1}), attaches it
     * through {@code attach} and records it; {@code via} (how it was attached) ends the progress line.
     */
    Pod attachPod(int node, int j, Attach attach, String via) throws Exception {
        return attachPodDual(node, j, ns -> new Addresses(attach.attach(ns), null), via);
    }

    /** {@link #attachPod}, keeping the pod's IPv6 address too when the attach returned one. */
    Pod attachPodDual(int node, int j, AttachDual attach, String via) throws Exception {
        String ns = names.pod(node, j);
        topology.createPodNs(ns);
        String name = ClusterNames.nodeName(node) + "/pod" + j;
        Addresses a = attach.attach(ns);
        Pod pod = new Pod(name, node, ns, a.ipv4(), a.ipv6());
        pods.add(pod);
        progress.accept("pod " + name + ": " + pod.ip() + (pod.ipv6() == null ? "" : " " + pod.ipv6()) + " (netns " + ns
                + ") via " + via);
        return pod;
    }

    List<Pod> pods() {
        return List.copyOf(pods);
    }

    private void closeQuietly() {
        try {
            close();
        } catch (Exception e) {
            System.err.println(label + " " + names.id() + ": cleanup failed: " + e);
        }
    }

    /** The owner's steps, then the namespaces and the run directory; every step runs, the first failure is thrown. */
    @Override
    public void close() throws Exception {
        if (!closed.compareAndSet(false, true)) {
            return;
        }
        Cleanup.removeShutdownHook(shutdownHook);
        Cleanup cleanup = new Cleanup();
        ownSteps.steps(cleanup);
        cleanup.attempt(topology::close).attempt(() -> StaleRuns.deleteTree(runDir));
        progress.accept("cleaned up run " + names.id() + ": processes ended, namespaces and " + runDir + " removed");
        cleanup.throwIfFailed();
    }
}
