package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.jflannel.linuxnet.netns.NetNs;
import org.jflannel.netpol.Addr;
import org.jflannel.netpol.ClusterState;
import org.jflannel.netpol.Endpoint;
import org.jflannel.netpol.PodInfo;
import org.jflannel.netpol.Policy;
import org.jflannel.netpol.Protocol;
import org.jflannel.netpol.Spec;
import org.jflannel.netpol.kube.ApiObjects;
import org.jflannel.testsupport.cluster.ClusterNames;
import org.jflannel.testsupport.cluster.ClusterNode;
import org.jflannel.testsupport.cluster.ClusterOptions;
import org.jflannel.testsupport.cluster.ClusterPerClass;
import org.jflannel.testsupport.cluster.NetnsCluster;
import org.jflannel.testsupport.cluster.Pod;
import org.jflannel.testsupport.cluster.Wait;
import org.jflannel.testsupport.netns.Reachability;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * {@code --network-policy} on a 3-node kube cluster (vxlan, the mock API server): the harness's six pods
 * are published as Pod objects in namespaces x and y (their node, address, labels, a named port), each
 * listens on TCP 80 and 81, and every pod tries every other on both ports, same-node pairs across cni0
 * and cross-node pairs through flannel.1. With policies created through the API, what gets through
 * becomes exactly what the spec allows ({@link Spec}, on the same objects), within a bound; then a pod's
 * labels change and the truth follows; a daemon killed and restarted lets no denied connection through
 * meanwhile (the table stays in the kernel, fail closed) and takes the table over; 30 s without the API
 * server the rules stay; then the policies go and everything passes again.
 */
@Tag("e2e")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class KubeNetworkPolicyClusterIT {
    private static final Duration CONVERGE_WITHIN = Duration.ofSeconds(60);
    private static final int[] PORTS = {80, 81};
    private static final ObjectMapper JSON = new ObjectMapper();

    @RegisterExtension
    static final ClusterPerClass CLUSTER = ClusterPerClass.of(ClusterOptions.defaults().withMode(ClusterOptions.Mode.KUBE)
            .withDaemonEnv(Map.of("FLANNELD_NETWORK_POLICY", "true")));
    private final NetnsCluster cluster;
    private final Map<String, PodInfo> pods = new LinkedHashMap<>();
    private final Map<String, Pod> harnessPods = new LinkedHashMap<>();
    private final Map<String, Map<String, String>> namespaces = new TreeMap<>();
    private final List<AutoCloseable> servers = new ArrayList<>();
    private final Map<String, NetworkPolicy> policies = new TreeMap<>();

    KubeNetworkPolicyClusterIT(NetnsCluster cluster) {
        this.cluster = cluster;
    }

    @BeforeAll
    void publishPodsAndListen() throws Exception {
        namespace("x", Map.of("team", "x"));
        namespace("y", Map.of("team", "y"));
        int i = 0;
        for (Pod p : cluster.pods()) {
            String ns = i % 3 == 2 ? "y" : "x";
            String role = List.of("web", "db", "web").get(i % 3);
            publishPod(p, ns, Map.of("role", role), i);
            i++;
        }
        for (Pod p : cluster.pods()) {
            servers.addAll(listen(p));
        }
    }

    @AfterAll
    void closeServers() throws Exception {
        for (AutoCloseable s : servers) {
            s.close();
        }
    }

    @Test
    @Order(1)
    void withoutPoliciesEveryPodReachesEveryOtherOnEveryPort() throws Exception {
        awaitTruth("no policies");
    }

    @Test
    @Order(2)
    void policiesThroughTheApiGiveTheSpecsTruthTableSameNodeAndAcrossNodes() throws Exception {
        // the db pods take http (a named port: 80) from web pods of their namespace only
        policy("""
                metadata: {name: db-from-web, namespace: x}
                spec:
                  podSelector: {matchLabels: {role: db}}
                  ingress: [{from: [{podSelector: {matchLabels: {role: web}}}], ports: [{port: http}]}]
                """);
        // namespace y's pods may only talk to namespace x, on port 81
        policy("""
                metadata: {name: y-out, namespace: y}
                spec:
                  podSelector: {}
                  policyTypes: [Egress]
                  egress: [{to: [{namespaceSelector: {matchLabels: {team: x}}}], ports: [{protocol: TCP, port: 81}]}]
                """);
        Map<String, Boolean> truth = awaitTruth("two policies");
        assertThat(truth).as("some pairs denied, some allowed").containsValue(true).containsValue(false);

        // what each daemon says of it: its pods and the policies isolating each (/policy), and its series
        double droppedIn = 0;
        double droppedOut = 0;
        for (ClusterNode n : cluster.nodes()) {
            droppedIn += Math.max(0, n.metric("flanneld_netpol_dropped_packets_total{direction=\"ingress\"}"));
            droppedOut += Math.max(0, n.metric("flanneld_netpol_dropped_packets_total{direction=\"egress\"}"));
            JsonNode doc = JSON.readTree(n.document("/policy"));
            assertThat(doc.path("listed").asBoolean()).as("/policy on %s", n.name()).isTrue();
            assertThat(doc.path("policies").asInt()).isEqualTo(2);
            for (JsonNode p : doc.path("pods")) {
                PodInfo pod = pods.get(p.path("pod").asText().substring(p.path("pod").asText().indexOf('/') + 1));
                assertThat(pod.node()).as("%s lists only its own pods", n.name()).isEqualTo(n.name());
                List<String> ingress = new ArrayList<>();
                p.path("ingress").forEach(x -> ingress.add(x.asText()));
                List<String> egress = new ArrayList<>();
                p.path("egress").forEach(x -> egress.add(x.asText()));
                assertThat(ingress).as("ingress policies of %s", pod.id())
                        .isEqualTo("db".equals(pod.labels().get("role")) && pod.namespace().equals("x") ? List.of("x/db-from-web") : List.of());
                assertThat(egress).as("egress policies of %s", pod.id())
                        .isEqualTo(pod.namespace().equals("y") ? List.of("y/y-out") : List.of());
            }
            assertThat(doc.path("pods")).as("%s's pods", n.name()).hasSize(2);
            assertThat(n.metric("flanneld_netpol_policies{state=\"enforced\"}")).isEqualTo(2);
            assertThat(n.metric("flanneld_netpol_table_loads_total{outcome=\"ok\"}")).isGreaterThanOrEqualTo(1);
        }
        assertThat(droppedIn).as("SYNs the db pods' policy dropped, all nodes").isPositive();
        assertThat(droppedOut).as("SYNs namespace y's egress policy dropped, all nodes").isPositive();

        // and the daemons said so: one line per denied attempt (NFLOG), naming the pods, the port, the direction
        StringBuilder logs = new StringBuilder();
        for (ClusterNode n : cluster.nodes()) {
            logs.append(n.logSinceStart());
        }
        List<String> denied = logs.toString().lines().filter(l -> l.contains("network policy denied direction=")).toList();
        assertThat(denied).as("denied-connection lines").anySatisfy(l -> assertThat(l)
                .contains("direction=ingress protocol=tcp").containsPattern("destination_pod=x/\\S+ port=8[01]"));
        assertThat(denied).anySatisfy(l -> assertThat(l).contains("direction=egress").containsPattern("source_pod=y/\\S+"));
        for (Map.Entry<String, Boolean> e : truth.entrySet()) {
            if (e.getValue()) { // an allowed pair is never logged as denied, whatever its port
                String[] ends = e.getKey().split(":")[0].split("->"); // "from->to:port"
                String line = "source_pod=" + pods.get(ends[0]).id() + " destination=";
                String to = " destination_pod=" + pods.get(ends[1]).id() + " port=" + e.getKey().split(":")[1];
                assertThat(denied).as("allowed %s", e.getKey()).noneMatch(l -> l.contains(line) && l.endsWith(to));
            }
        }
    }

    @Test
    @Order(3)
    void aPodsLabelChangeMovesItInAndOutOfThePolicies() throws Exception {
        String webInX = pods.values().stream().filter(p -> p.namespace().equals("x") && "web".equals(p.labels().get("role")))
                .findFirst().orElseThrow().name();
        Pod p = harnessPods.get(webInX);
        publishPod(p, "x", Map.of("role", "batch"), new ArrayList<>(harnessPods.keySet()).indexOf(webInX));
        awaitTruth(webInX + " relabelled role=batch");
    }

    @Test
    @Order(4)
    void aDaemonKilledAndRestartedLetsNoDeniedConnectionThroughMeanwhileAndTakesTheTableOver() throws Exception {
        Map<String, Boolean> truth = awaitTruth("before the restart");
        String denied = truth.entrySet().stream().filter(e -> !e.getValue()).map(Map.Entry::getKey).findFirst().orElseThrow();
        PodInfo from = pods.get(denied.substring(0, denied.indexOf("->")));
        PodInfo to = pods.get(denied.substring(denied.indexOf("->") + 2, denied.indexOf(':')));
        int port = Integer.parseInt(denied.substring(denied.indexOf(':') + 1));
        ClusterNode node = cluster.nodes().stream().filter(n -> n.name().equals(to.node())).findFirst().orElseThrow();
        // tries the denied connection again and again while the daemon of its destination's node is down and back
        java.util.concurrent.atomic.AtomicInteger tries = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicInteger through = new java.util.concurrent.atomic.AtomicInteger();
        java.util.concurrent.atomic.AtomicBoolean stop = new java.util.concurrent.atomic.AtomicBoolean();
        InetAddress dst = InetAddress.getByName(to.ips().get(0).toString());
        String ns = harnessPods.get(from.name()).namespace();
        Thread prober = new Thread(() -> {
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (!stop.get() && System.nanoTime() < end) {
                try {
                    tries.incrementAndGet();
                    if (connects(ns, dst, port, Duration.ofMillis(300))) {
                        through.incrementAndGet();
                    }
                } catch (Exception e) {
                    return;
                }
            }
        }, "netpol-restart-prober");
        prober.start();
        try {
            node.kill();
            node.start();
            node.awaitReady();
            JsonNode doc = awaitListed(node);
            assertThat(doc.path("loads").asInt()).as("the new daemon loaded the table").isGreaterThanOrEqualTo(1);
        } finally {
            stop.set(true);
            prober.join(10_000);
        }
        System.out.println("netpol: " + denied + " tried " + tries.get() + " times across the restart of " + node.name());
        assertThat(tries.get()).as("tries of the denied connection").isGreaterThan(3);
        assertThat(through.get()).as("tries of %s that got through while its node's daemon restarted", denied).isZero();
        awaitTruth("after the restart of " + node.name());
    }

    @Test
    @Order(5)
    void anApiServerOutageKeepsTheRulesAndAChangeMadeMeanwhileTakesEffectAfter() throws Exception {
        Map<String, Boolean> truth = awaitTruth("before the outage");
        cluster.stopKubeApi();
        try {
            // written through the server's other front, which the daemons do not use: they see it after the outage
            String batch = pods.values().stream().filter(p -> "batch".equals(p.labels().get("role"))).findFirst().orElseThrow().name();
            publishPod(harnessPods.get(batch), "x", Map.of("role", "web"), 0);
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            int rounds = 0;
            while (System.nanoTime() < end) { // 30 s without the API: the kernel's rules are the daemons' last
                assertThat(probe()).as("30 s into an API outage, round %d", rounds).isEqualTo(truth);
                rounds++;
            }
            assertThat(rounds).isPositive();
        } finally {
            cluster.resumeKubeApi();
        }
        Map<String, Boolean> after = awaitTruth("after the outage, with the change made during it");
        assertThat(after).as("the change made during the outage").isNotEqualTo(truth);
    }

    @Test
    @Order(6)
    void withThePoliciesDeletedEverythingPassesAgain() throws Exception {
        for (NetworkPolicy np : policies.values()) {
            cluster.deleteKubeObject(Serialization.asJson(np));
        }
        policies.clear();
        Map<String, Boolean> truth = awaitTruth("policies deleted");
        assertThat(truth).doesNotContainValue(false);
    }

    /** Waits until the probe matrix equals the spec's for the current objects; returns it. */
    private Map<String, Boolean> awaitTruth(String what) throws Exception {
        ClusterState s = new ClusterState(new ArrayList<>(pods.values()), namespaces,
                policies.values().stream().map(ApiObjects::policy).toList());
        Map<String, Boolean> expected = new TreeMap<>();
        for (PodInfo from : pods.values()) {
            for (PodInfo to : pods.values()) {
                if (from != to) {
                    for (int port : PORTS) {
                        expected.put(from.name() + "->" + to.name() + ":" + port,
                                Spec.allows(s, Endpoint.of(from, from.ips().get(0)), Endpoint.of(to, to.ips().get(0)), Protocol.TCP, port));
                    }
                }
            }
        }
        long end = System.nanoTime() + CONVERGE_WITHIN.toNanos();
        long start = System.nanoTime();
        Map<String, Boolean> got;
        do {
            got = probe();
            Map<String, Boolean> g = got;
            List<String> off = expected.keySet().stream().filter(k -> !expected.get(k).equals(g.get(k)))
                    .map(k -> k + (expected.get(k) ? " denied" : " passed")).toList();
            if (!off.isEmpty()) {
                System.out.println("netpol: " + what + ": not yet: " + off);
            }
            if (got.equals(expected)) {
                System.out.println("netpol: " + what + ": truth table of " + expected.size() + " probes after "
                        + (System.nanoTime() - start) / 1_000_000 + " ms");
                return got;
            }
        } while (System.nanoTime() < end);
        Map<String, Boolean> last = got;
        assertThat(last).as("%s: what got through, %s after the change", what, CONVERGE_WITHIN).isEqualTo(expected);
        return last;
    }

    private Map<String, Boolean> probe() throws Exception {
        ExecutorService pool = Executors.newFixedThreadPool(12);
        try {
            Map<String, Future<Boolean>> f = new TreeMap<>();
            for (PodInfo from : pods.values()) {
                for (PodInfo to : pods.values()) {
                    if (from != to) {
                        for (int port : PORTS) {
                            String ns = harnessPods.get(from.name()).namespace();
                            InetAddress dst = InetAddress.getByName(to.ips().get(0).toString());
                            f.put(from.name() + "->" + to.name() + ":" + port, pool.submit(() -> connects(ns, dst, port)));
                        }
                    }
                }
            }
            Map<String, Boolean> got = new TreeMap<>();
            for (Map.Entry<String, Future<Boolean>> e : f.entrySet()) {
                got.put(e.getKey(), e.getValue().get(60, TimeUnit.SECONDS));
            }
            return got;
        } finally {
            pool.shutdownNow();
        }
    }

    /** A TCP connect from pod namespace {@code ns}: the socket made there, the SYN-ACK needed back. */
    private static boolean connects(String ns, InetAddress dst, int port) throws Exception {
        return connects(ns, dst, port, Duration.ofSeconds(2));
    }

    private static boolean connects(String ns, InetAddress dst, int port, Duration within) throws Exception {
        try (NetNs n = NetNs.open(ns)) {
            return Reachability.tcpConnects(n, dst, port, within);
        }
    }

    /** The node's {@code /policy} once its daemon has listed everything (within the convergence bound). */
    private static JsonNode awaitListed(ClusterNode node) throws Exception {
        return Wait.until("/policy on " + node.name() + " listed and loaded", CONVERGE_WITHIN,
                () -> JSON.readTree(node.document("/policy")), doc -> doc.path("listed").asBoolean() && doc.path("loads").asInt() > 0);
    }


    private static List<AutoCloseable> listen(Pod p) throws Exception {
        try (NetNs n = NetNs.open(p.namespace())) {
            return Reachability.tcpListeners(n, PORTS);
        }
    }

    private void namespace(String name, Map<String, String> labels) throws Exception {
        Map<String, String> all = new TreeMap<>(labels);
        all.put("kubernetes.io/metadata.name", name);
        Namespace ns = new NamespaceBuilder().withNewMetadata().withName(name).withLabels(all).endMetadata().build();
        cluster.applyKubeObject(Serialization.asJson(ns));
        namespaces.put(name, all);
    }

    private void publishPod(Pod p, String ns, Map<String, String> labels, int i) throws Exception {
        String name = p.name().replace('/', '-'); // node1/pod1: the harness's name, no object name
        io.fabric8.kubernetes.api.model.Pod obj = new PodBuilder().withNewMetadata().withName(name).withNamespace(ns)
                .withLabels(labels).endMetadata()
                .withNewSpec().withNodeName(ClusterNames.nodeName(p.node())).addNewContainer().withName("app").withImage("none")
                .addNewPort().withName("http").withContainerPort(80).withProtocol("TCP").endPort().endContainer().endSpec()
                .withNewStatus().withPhase("Running").withPodIP(p.ip()).addNewPodIP(p.ip()).endStatus().build();
        apply(obj);
        pods.put(name, ApiObjects.pod(obj));
        harnessPods.put(name, p);
        assertThat(pods.get(name).ips()).containsExactly(Addr.parse(p.ip()));
    }

    private void policy(String yaml) throws Exception {
        NetworkPolicy np = Serialization.unmarshal(yaml, NetworkPolicy.class);
        np.setApiVersion("networking.k8s.io/v1");
        np.setKind("NetworkPolicy");
        apply(np);
        policies.put(np.getMetadata().getNamespace() + "/" + np.getMetadata().getName(), np);
        Policy read = ApiObjects.policy(np); // the oracle reads what flanneld reads
        assertThat(read.namespace()).isEqualTo(np.getMetadata().getNamespace());
    }

    private void apply(HasMetadata obj) throws Exception {
        cluster.applyKubeObject(Serialization.asJson(obj));
    }
}
