package org.jflannel.netpol;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps what the policies depend on (pods, namespaces' labels, policies; fed by the API side in any order)
 * and keeps the node's table equal to what they compile to: after a change, on its thread
 * {@code netpol-sync}, it compiles the state for {@code node}, renders the table and hands the script
 * to {@code applier}: the first time (and every {@link #REPLACE_EVERY_MS}, and after a failed load) the whole
 * table, replacing what the kernel holds; otherwise only the commands that turn the table last loaded into the
 * new one ({@link NftScript#update}: a few set elements for a pod's label change), nothing when it is the same.
 * Changes that arrive meanwhile are taken
 * by the next run (one run at a time, none queued twice). Nothing is applied before {@link #ready()}:
 * until the API side has its first listing of everything, the table the kernel has (the last process's,
 * after a restart) stays, rather than one made from half the objects. A failed apply is logged and
 * tried again after {@link #RETRY_MS}; a policy the records cannot represent is kept out, logged once
 * and listed in {@link #status()}.
 */
public final class PolicySync implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(PolicySync.class);
    static final long RETRY_MS = 1000;
    static final long REPLACE_EVERY_MS = TimeUnit.MINUTES.toMillis(5);

    /** Where the script goes: flanneld's {@code nft -f}; tests keep it. */
    @FunctionalInterface
    public interface Applier {
        void apply(String script) throws Exception;
    }

    /** What the last run did, for the daemon's status endpoint and metrics. */
    public record Status(boolean ready, long applies, long failures, int policies, int localPods, int chains, int sets,
                         Map<String, String> rejected, String lastError, long lastApplyNanos) {
    }

    private final String node;
    private final Applier applier;
    private final DenyLog log;
    private final Map<String, PodInfo> pods = new ConcurrentHashMap<>();
    private final Map<String, Map<String, String>> namespaces = new ConcurrentHashMap<>();
    private final Map<String, Policy> policies = new ConcurrentHashMap<>();
    private final Map<String, String> rejected = new ConcurrentHashMap<>();
    private final AtomicBoolean pending = new AtomicBoolean();
    private final AtomicBoolean ready = new AtomicBoolean();
    private final ScheduledExecutorService thread;
    private volatile String applied;
    /** What the kernel's table holds, as far as this process loaded it; null: load the whole table next. */
    private volatile NodeRules appliedRules;
    private volatile boolean forceReplace;
    private volatile Status status = new Status(false, 0, 0, 0, 0, 0, 0, Map.of(), null, 0);

    public PolicySync(String node, Applier applier) {
        this(node, applier, DenyLog.OFF);
    }

    /** As {@link #PolicySync(String, Applier)}, the chains handing what they drop to NFLOG as {@code log} says. */
    public PolicySync(String node, Applier applier, DenyLog log) {
        this.node = node;
        this.applier = applier;
        this.log = log;
        this.thread = Executors.newSingleThreadScheduledExecutor(r -> {
            Thread t = new Thread(r, "netpol-sync");
            t.setDaemon(true);
            return t;
        });
        // updates touch only what changed; now and then the whole table is loaded again, so that a table changed by
        // hand (an element deleted, a chain flushed) is put right
        thread.scheduleWithFixedDelay(() -> {
            forceReplace = true;
            changed();
        }, REPLACE_EVERY_MS, REPLACE_EVERY_MS, TimeUnit.MILLISECONDS);
    }

    public void pod(String id, PodInfo p) {
        if (p == null) {
            pods.remove(id);
        } else {
            pods.put(id, p);
        }
        changed();
    }

    public void namespace(String name, Map<String, String> labels) {
        if (labels == null) {
            namespaces.remove(name);
        } else {
            namespaces.put(name, Map.copyOf(labels));
        }
        changed();
    }

    /** A policy read ({@code p}), deleted (both null), or one that cannot be enforced ({@code rejection}). */
    public void policy(String id, Policy p, String rejection) {
        if (p == null) {
            policies.remove(id);
        } else {
            policies.put(id, p);
        }
        if (rejection == null) {
            rejected.remove(id);
        } else if (!rejection.equals(rejected.put(id, rejection))) {
            LOG.warn("network policy not enforced policy={} error=\"{}\"", id, rejection);
        }
        changed();
    }

    /** The API side has listed everything once: from now on the table follows the state. */
    public void ready() {
        if (ready.compareAndSet(false, true)) {
            LOG.info("network policy state listed node={} pods={} namespaces={} policies={}", node, pods.size(), namespaces.size(),
                    policies.size());
            changed();
        }
    }

    public Status status() {
        return status;
    }

    /** One local pod as the policies see it: the policies that isolate it in each direction (none: open that way). */
    public record PodReport(String pod, List<Addr> addresses, List<String> ingressPolicies, List<String> egressPolicies) {
    }

    /** This node's pods and the policies selecting each, from the state as it stands. */
    public List<PodReport> report() {
        ClusterState s = state();
        List<PodReport> out = new ArrayList<>();
        for (PodInfo p : s.pods()) {
            if (p.subject() && node.equals(p.node())) {
                out.add(new PodReport(p.id(), p.ips(), s.isolating(p, Direction.INGRESS).stream().map(Policy::id).sorted().toList(),
                        s.isolating(p, Direction.EGRESS).stream().map(Policy::id).sorted().toList()));
            }
        }
        out.sort(java.util.Comparator.comparing(PodReport::pod));
        return out;
    }

    public String node() {
        return node;
    }

    /** The pod ("namespace/name") that holds {@code a} now, or null (a scan: for a log line, not per packet). */
    public String podAt(Addr a) {
        for (PodInfo p : pods.values()) {
            if (p.subject() && p.ips().contains(a)) {
                return p.id();
            }
        }
        return null;
    }

    /** The state as it stands (a copy). */
    public ClusterState state() {
        return new ClusterState(new ArrayList<>(pods.values()), new TreeMap<>(namespaces),
                policies.values().stream().sorted(java.util.Comparator.comparing(Policy::id)).toList());
    }

    private void changed() {
        if (ready.get() && pending.compareAndSet(false, true)) {
            thread.execute(this::sync);
        }
    }

    private void sync() {
        try {
            syncOnce();
        } catch (RuntimeException e) { // a state the compiler cannot take: logged, the kernel's table left as it is
            LOG.error("network policy compile failed node={} error=\"{}\"", node, e.toString(), e);
            Status b = status;
            status = new Status(true, b.applies(), b.failures() + 1, b.policies(), b.localPods(), b.chains(), b.sets(),
                    Map.copyOf(rejected), e.toString(), b.lastApplyNanos());
        }
    }

    private void syncOnce() {
        pending.set(false);
        long start = System.nanoTime();
        ClusterState s = state();
        NodeRules rules = Compiler.compile(s, node);
        NodeRules loaded = forceReplace ? null : appliedRules;
        forceReplace = false;
        String script = loaded == null ? NftScript.replace(rules, log) : NftScript.update(loaded, rules, log);
        Status before = status;
        int localPods = (int) s.pods().stream().filter(p -> p.subject() && node.equals(p.node())).count();
        if (script.isEmpty()) {
            status = new Status(true, before.applies(), before.failures(), s.policies().size(), localPods, rules.chains().size(),
                    rules.sets().size() + rules.portSets().size(), Map.copyOf(rejected), before.lastError(), before.lastApplyNanos());
            return;
        }
        try {
            applier.apply(script);
            applied = script;
            appliedRules = rules;
            long took = System.nanoTime() - start;
            status = new Status(true, before.applies() + 1, before.failures(), s.policies().size(), localPods, rules.chains().size(),
                    rules.sets().size() + rules.portSets().size(), Map.copyOf(rejected), null, took);
            LOG.info("network policy applied node={} policies={} localPods={} isolatedChains={} sets={} took={}ms", node,
                    s.policies().size(), localPods, rules.chains().size(), rules.sets().size() + rules.portSets().size(),
                    took / 1_000_000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            String err = String.valueOf(e.getMessage());
            if (!err.equals(before.lastError())) {
                LOG.warn("network policy apply failed node={} error=\"{}\" (retrying every {} ms)", node, err, RETRY_MS);
            }
            appliedRules = null; // whatever the kernel holds now, the next load replaces the whole table
            status = new Status(true, before.applies(), before.failures() + 1, s.policies().size(), localPods, rules.chains().size(),
                    rules.sets().size() + rules.portSets().size(), Map.copyOf(rejected), err, before.lastApplyNanos());
            thread.schedule(() -> {
                if (pending.compareAndSet(false, true)) {
                    sync();
                }
            }, RETRY_MS, TimeUnit.MILLISECONDS);
        }
    }

    /** Blocks until every change made so far has been run through (tests; at most {@code millis}). */
    public boolean awaitIdle(long millis) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
        while (System.nanoTime() < end) {
            var f = thread.submit(() -> { });
            try {
                f.get(Math.max(1, TimeUnit.NANOSECONDS.toMillis(end - System.nanoTime())), TimeUnit.MILLISECONDS);
            } catch (java.util.concurrent.ExecutionException | java.util.concurrent.TimeoutException e) {
                return false;
            }
            if (!pending.get()) {
                return true;
            }
        }
        return false;
    }

    /** The last script applied (the whole table, or the commands of an update), if any. */
    public Optional<String> applied() {
        return Optional.ofNullable(applied);
    }

    /** The rules the kernel's table holds, as this process last loaded them, if any. */
    public Optional<NodeRules> appliedRules() {
        return Optional.ofNullable(appliedRules);
    }

    /** Stops the thread; the table stays in the kernel (fail closed: a restart takes it over). */
    @Override
    public void close() {
        thread.shutdownNow();
    }
}
