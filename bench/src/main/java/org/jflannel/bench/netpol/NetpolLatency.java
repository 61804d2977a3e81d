package org.jflannel.bench.netpol;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.jflannel.netpol.ClusterState;
import org.jflannel.netpol.Compiler;
import org.jflannel.netpol.NftScript;
import org.jflannel.netpol.NodeRules;
import org.jflannel.netpol.PodInfo;
import org.jflannel.netpol.Policy;
import org.jflannel.netpol.PolicySync;
import org.jflannel.netpol.kube.ApiObjects;
import org.jflannel.netpol.kube.PolicyInformers;
import org.jflannel.testsupport.kube.KubeMockServer;

/**
 * Enforcement latency of {@code --network-policy} (issue 35): PODS pods over 10 nodes in 20 namespaces and
 * POLICIES policies in the API stand-in (in this JVM, on loopback), the policy engine of node n1 on its
 * informers, loading its table into a throwaway network namespace with the real {@code nft -f}. Then CHANGES
 * changes, one at a time (a label of one of n1's pods, a new policy selecting one of them, a policy deleted, in
 * turn; a change that leaves n1's table as it was is not counted): the time from the API write
 * to the end of the {@code nft -f} that loads the table the change makes (the bench compiles the expected
 * rules itself, so a load that does not hold the change yet does not count). The first load is the whole table,
 * the others updates ({@code NftScript.update}). Prints one result line: {@code netpol-latency pods=... policies=...
 * localPods=... chains=... sets=... changes=... p50=...ms p99=...ms max=...ms firstLoad=...ms tableBytes=...
 * updateBytesMedian=...}.
 *
 * <pre>java -cp bench/target/benchmarks.jar org.jflannel.bench.netpol.NetpolLatency NETNS PODS POLICIES CHANGES</pre>
 */
public final class NetpolLatency {
    private static final String NODE = "n1";
    static final int NODES = 10;
    static final int NAMESPACES = 20;
    static final int APPS = 50;
    static final List<String> TIERS = List.of("web", "db", "cache");

    private NetpolLatency() {
    }

    public static void main(String[] args) throws Exception {
        String netns = args[0];
        int pods = Integer.parseInt(args[1]);
        int policies = Integer.parseInt(args[2]);
        int changes = Integer.parseInt(args[3]);
        Random random = new Random(42);
        long[] loadEnd = new long[1];
        int[] scriptBytes = new int[1];
        PolicySync.Applier nft = script -> {
            Process p = new ProcessBuilder("ip", "netns", "exec", netns, "nft", "-f", "-").redirectErrorStream(true).start();
            p.getOutputStream().write(script.getBytes(StandardCharsets.UTF_8));
            p.getOutputStream().close();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
                throw new IllegalStateException("nft -f: " + out);
            }
            synchronized (loadEnd) {
                loadEnd[0] = System.nanoTime();
                scriptBytes[0] = script.length();
            }
        };
        try (KubeMockServer server = KubeMockServer.start(); KubernetesClient client = server.newClient()) {
            Map<String, Map<String, String>> nsLabels = new TreeMap<>();
            for (int n = 0; n < NAMESPACES; n++) {
                Map<String, String> l = Map.of("kubernetes.io/metadata.name", "ns" + n, "team", "t" + (n % 5));
                client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName("ns" + n).withLabels(l).endMetadata()
                        .build()).create();
                nsLabels.put("ns" + n, l);
            }
            Map<String, Pod> podObjects = new HashMap<>();
            long t = System.nanoTime();
            for (int i = 0; i < pods; i++) {
                Pod p = pod(i, random.nextInt(APPS), TIERS.get(random.nextInt(TIERS.size())));
                client.pods().inNamespace(p.getMetadata().getNamespace()).resource(p).create();
                podObjects.put(key(p), p);
            }
            Map<String, NetworkPolicy> policyObjects = new HashMap<>();
            for (int i = 0; i < policies; i++) {
                NetworkPolicy np = policy(i, random);
                client.network().v1().networkPolicies().inNamespace(np.getMetadata().getNamespace()).resource(np).create();
                policyObjects.put(key(np), np);
            }
            System.err.printf("netpol-latency: %d pods, %d policies written in %d ms%n", pods, policies,
                    TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t));

            long start = System.nanoTime();
            try (PolicySync sync = new PolicySync(NODE, nft); PolicyInformers informers = PolicyInformers.start(client, sync)) {
                NodeRules expected = expected(podObjects, nsLabels, policyObjects);
                long firstLoad = awaitLoaded(sync, loadEnd, expected, start);
                int fullBytes = scriptBytes[0];
                List<Integer> updateBytes = new ArrayList<>();
                List<Long> latencies = new ArrayList<>();
                for (int c = 0; c < changes; c++) {
                    long writeAt;
                    switch (c % 3) {
                        case 0 -> { // one of the node's pods changes its labels
                            List<String> keys = podObjects.values().stream().filter(p -> NODE.equals(p.getSpec().getNodeName()))
                                    .map(NetpolLatency::key).sorted().toList();
                            Pod p = podObjects.get(keys.get(random.nextInt(keys.size())));
                            Pod changed = new PodBuilder(p).editMetadata().addToLabels("app", "a" + random.nextInt(APPS))
                                    .addToLabels("tier", TIERS.get(random.nextInt(TIERS.size()))).endMetadata().build();
                            podObjects.put(key(changed), changed);
                            writeAt = System.nanoTime();
                            client.pods().inNamespace(changed.getMetadata().getNamespace()).resource(changed).update();
                        }
                        case 1 -> { // a new policy selecting one of the node's pods
                            List<Pod> local = podObjects.values().stream().filter(p -> NODE.equals(p.getSpec().getNodeName()))
                                    .sorted(java.util.Comparator.comparing(NetpolLatency::key)).toList();
                            Pod target = local.get(random.nextInt(local.size()));
                            NetworkPolicy np = new NetworkPolicyBuilder(policy(policies + c, random)).editMetadata()
                                    .withNamespace(target.getMetadata().getNamespace()).endMetadata().editSpec().editPodSelector()
                                    .addToMatchLabels("app", target.getMetadata().getLabels().get("app")).endPodSelector().endSpec().build();
                            policyObjects.put(key(np), np);
                            writeAt = System.nanoTime();
                            client.network().v1().networkPolicies().inNamespace(np.getMetadata().getNamespace()).resource(np).create();
                        }
                        default -> { // a policy deleted
                            List<String> keys = new ArrayList<>(policyObjects.keySet());
                            NetworkPolicy np = policyObjects.remove(keys.get(random.nextInt(keys.size())));
                            writeAt = System.nanoTime();
                            client.network().v1().networkPolicies().inNamespace(np.getMetadata().getNamespace())
                                    .withName(np.getMetadata().getName()).delete();
                        }
                    }
                    NodeRules want = expected(podObjects, nsLabels, policyObjects);
                    if (sync.appliedRules().filter(want::equals).isPresent()) {
                        continue; // the change does not touch this node's table
                    }
                    latencies.add(awaitLoaded(sync, loadEnd, want, writeAt));
                    updateBytes.add(scriptBytes[0]);
                }
                long[] sorted = latencies.stream().mapToLong(Long::longValue).sorted().toArray();
                PolicySync.Status s = sync.status();
                System.out.printf("netpol-latency pods=%d policies=%d localPods=%d chains=%d sets=%d changes=%d p50=%.1fms p99=%.1fms"
                                + " max=%.1fms firstLoad=%.0fms tableBytes=%d updateBytesMedian=%d%n", pods, policies, s.localPods(),
                        s.chains(), s.sets(), sorted.length, pct(sorted, 50), pct(sorted, 99),
                        sorted.length == 0 ? 0 : sorted[sorted.length - 1] / 1e6, firstLoad / 1e6, fullBytes,
                        updateBytes.isEmpty() ? 0 : updateBytes.stream().sorted().toList().get(updateBytes.size() / 2));
            }
        }
    }

    private static String firstDifference(String want, String got) {
        String[] a = want.split("\n");
        String[] b = got.split("\n");
        for (int i = 0; i < Math.max(a.length, b.length); i++) {
            String x = i < a.length ? a[i] : "(end)";
            String y = i < b.length ? b[i] : "(end)";
            if (!x.equals(y)) {
                return "line " + (i + 1) + ": expected [" + x.substring(0, Math.min(300, x.length())) + "] loaded ["
                        + y.substring(0, Math.min(300, y.length())) + "]";
            }
        }
        return "none";
    }

    private static double pct(long[] sorted, int p) {
        if (sorted.length == 0) {
            return 0;
        }
        int i = (int) Math.ceil(p / 100.0 * sorted.length) - 1;
        return sorted[Math.max(0, Math.min(sorted.length - 1, i))] / 1e6;
    }

    /**
     * Nanoseconds from {@code since} to the end of the load that made the kernel's table {@code want} (at most 120 s;
     * polled every millisecond, the load's own end time taken).
     */
    private static long awaitLoaded(PolicySync sync, long[] loadEnd, NodeRules want, long since) throws InterruptedException {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (sync.appliedRules().filter(want::equals).isEmpty()) {
            if (System.nanoTime() > end) {
                throw new IllegalStateException("the expected table was not loaded within 120 s; first difference: "
                        + firstDifference(NftScript.replace(want), sync.appliedRules().map(NftScript::replace).orElse("")));
            }
            Thread.sleep(1);
        }
        synchronized (loadEnd) {
            return loadEnd[0] - since;
        }
    }

    private static NodeRules expected(Map<String, Pod> pods, Map<String, Map<String, String>> ns, Map<String, NetworkPolicy> policies) {
        List<PodInfo> p = pods.values().stream().map(ApiObjects::pod).toList();
        List<Policy> pol = policies.values().stream().map(ApiObjects::policy).toList();
        return Compiler.compile(new ClusterState(p, ns, pol), NODE);
    }

    static Pod pod(int i, int app, String tier) {
        int node = i % NODES + 1;
        String ip = "10." + (100 + node) + "." + (i / 250 % 250) + "." + (i % 250 + 2);
        return new PodBuilder().withNewMetadata().withName("p" + i).withNamespace("ns" + (i % NAMESPACES))
                .withLabels(Map.of("app", "a" + app, "tier", tier)).endMetadata()
                .withNewSpec().withNodeName("n" + node).addNewContainer().withName("c").withImage("none")
                .addNewPort().withName("http").withContainerPort(8080).endPort().endContainer().endSpec()
                .withNewStatus().withPhase("Running").withPodIP(ip).addNewPodIP(ip).endStatus().build();
    }

    /** A policy as a cluster has many: one app's pods take http (named) from a tier of their namespace and 443 from a team. */
    static NetworkPolicy policy(int i, Random random) {
        return new NetworkPolicyBuilder().withNewMetadata().withName("pol" + i).withNamespace("ns" + random.nextInt(NAMESPACES))
                .endMetadata().withNewSpec().withNewPodSelector().addToMatchLabels("app", "a" + random.nextInt(APPS)).endPodSelector()
                .addNewIngress().addNewFrom().withNewPodSelector().addToMatchLabels("tier", TIERS.get(random.nextInt(3))).endPodSelector()
                .endFrom().addNewPort().withNewPort("http").endPort().endIngress()
                .addNewIngress().addNewFrom().withNewNamespaceSelector().addToMatchLabels("team", "t" + random.nextInt(5))
                .endNamespaceSelector().endFrom().addNewPort().withProtocol("TCP").withNewPort(443).endPort().endIngress()
                .endSpec().build();
    }

    private static String key(io.fabric8.kubernetes.api.model.HasMetadata o) {
        return o.getMetadata().getNamespace() + "/" + o.getMetadata().getName();
    }
}
