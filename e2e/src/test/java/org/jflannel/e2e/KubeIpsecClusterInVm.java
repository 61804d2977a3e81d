package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jflannel.testsupport.cluster.Bounds;
import org.jflannel.testsupport.cluster.ClusterNode;
import org.jflannel.testsupport.cluster.ClusterOptions;
import org.jflannel.testsupport.cluster.ClusterOptions.Mode;
import org.jflannel.testsupport.cluster.ClusterPerClass;
import org.jflannel.testsupport.cluster.Cmd;
import org.jflannel.testsupport.cluster.ContinuousPings;
import org.jflannel.testsupport.cluster.NetnsCluster;
import org.jflannel.testsupport.cluster.PingTimeline;
import org.jflannel.testsupport.cluster.Pod;
import org.jflannel.testsupport.cluster.Wait;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The 3-node cluster of our daemons on ipsec in kube mode (the harness's API stand-in: nodes' podCIDRs are the
 * leases, the daemons annotate their Nodes), in the kernel VM only ({@link EtcdIpsecVmIT}): pods reach each other
 * over ESP; then node 1's flanneld is restarted while pings run, after SIGTERM (charon ended with it) and after
 * SIGKILL (charon outlives it: the new daemon ends that one by its pidfile and starts its own). Either way the XFRM
 * policies are adopted (their kernel add times unchanged: not removed, not replaced), each node has exactly one
 * charon, its daemon's child, and the tunnels come back; the outage is printed as a figure. Its name matches
 * neither tier's pattern: the host's kernel has no ESP.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class KubeIpsecClusterInVm {
    private static final String PREFIX = "flannel.alpha.coreos.com/";
    /** Under TCG: a JVM start, IKE with MODP4096 for two peers. A bound for "stuck", not a figure. */
    private static final Duration BACK_WITHIN = Bounds.scaled(Duration.ofMinutes(2));
    private static final Duration INTERVAL = Duration.ofMillis(500);

    @RegisterExtension
    static final ClusterPerClass CLUSTER = ClusterPerClass.of(ClusterOptions.defaults().withMode(Mode.KUBE)
            .withBackend(EtcdIpsecNodeIT.BACKEND));
    private final NetnsCluster cluster;

    KubeIpsecClusterInVm(NetnsCluster cluster) {
        this.cluster = cluster;
    }

    @Test
    @Order(1)
    void everyPodReachesEveryOtherPodOverEspAndTheNodesCarryUpstreamsAnnotations() throws Exception {
        assertThat(cluster.pods()).hasSize(6);
        for (ClusterNode n : cluster.nodes()) { // upstream's ipsec adds no routes: the default route, diverted by the policies
            Cmd.run(Duration.ofSeconds(30), List.of("ip", "-n", n.namespace(), "route", "replace", "default", "via", "192.0.2.1"));
        }
        Wait.until("every pod reaching every other over ipsec", Duration.ofMinutes(4), () -> cluster.pingMatrix().failures().isEmpty());
        Overlay.assertEveryPodReachesEveryOther(cluster);
        for (ClusterNode n : cluster.nodes()) {
            JsonNode node = cluster.kubeNode(n.name());
            JsonNode a = node.path("metadata").path("annotations");
            assertThat(a.path(PREFIX + "backend-type").asText()).as(n.name()).isEqualTo("ipsec");
            assertThat(a.path(PREFIX + "backend-data").asText()).as("upstream's nil BackendData").isEqualTo("null");
            assertThat(a.path(PREFIX + "public-ip").asText()).isEqualTo(n.publicIp().getHostAddress());
            assertThat(a.path(PREFIX + "kube-subnet-manager").asText()).isEqualTo("true");
            assertThat(n.lease().subnet()).as("the lease is the node's podCIDR").isEqualTo(node.path("spec").path("podCIDR").asText());
            assertThat(n.lease().mtu()).isEqualTo(1423);
            String states = Cmd.run(Duration.ofSeconds(30), List.of("ip", "-n", n.namespace(), "xfrm", "state")).stdout();
            assertThat(states).as("%s's SAs", n.name()).contains("proto esp", "reqid 11", "mode tunnel");
        }
        assertOneCharonPerNode();
    }

    @Test
    @Order(2)
    void aDaemonRestartedAfterSigtermAdoptsThePoliciesAndTheTunnelsComeBack() throws Exception {
        restart(false);
    }

    @Test
    @Order(3)
    void aDaemonRestartedAfterSigkillEndsTheCharonItLeftAdoptsThePoliciesAndTheTunnelsComeBack() throws Exception {
        restart(true);
    }

    private void restart(boolean sigkill) throws Exception {
        String how = sigkill ? "SIGKILL" : "SIGTERM";
        ClusterNode n1 = cluster.node(1);
        long oldCharon = charonPid(n1);
        Set<String> before = policyAddTimes(n1);
        assertThat(before).as("node 1's six policies (two peers), with their add times").hasSize(6);
        List<Pod> pods = onePodPerNode();
        Path logs = Files.createTempDirectory("ipsec-restart-" + how);
        Instant down;
        Instant up;
        Instant back;
        List<PingTimeline> timelines;
        try (ContinuousPings pings = ContinuousPings.start(pods, logs, INTERVAL, Duration.ofMinutes(15))) {
            Wait.until("pings answered before the restart", BACK_WITHIN, () -> Files.readString(
                    logs.resolve("ping-" + pods.get(0).namespace() + "-" + pods.get(1).namespace() + ".log")).contains("bytes from"));
            down = Instant.now();
            if (sigkill) { // the daemon alone: its charon outlives it, as upstream's would not (Pdeathsig)
                long pid = n1.daemon().orElseThrow().pid();
                ProcessHandle.of(pid).orElseThrow().destroyForcibly();
                Wait.until("flanneld gone after SIGKILL", Duration.ofSeconds(30), () -> !n1.daemon().orElseThrow().isAlive());
                assertThat(ProcessHandle.of(oldCharon).filter(ProcessHandle::isAlive)).as("charon outlived the daemon").isPresent();
            } else {
                assertThat(n1.stop()).as("exit code on SIGTERM").isZero();
                assertThat(ProcessHandle.of(oldCharon).filter(ProcessHandle::isAlive)).as("charon ended with the daemon").isEmpty();
            }
            n1.start();
            n1.awaitReady();
            up = Instant.now();
            Wait.until("pings between node 1's pod and the others answered again after the " + how + " restart", BACK_WITHIN,
                    () -> answeredSince(logs, pods, up));
            back = Instant.now();
            timelines = pings.stop();
        }
        String log = n1.logSinceStart();
        long newCharon = charonPid(n1);
        assertThat(newCharon).isNotEqualTo(oldCharon);
        assertThat(ProcessHandle.of(oldCharon).filter(ProcessHandle::isAlive)).as("the old charon is gone").isEmpty();
        assertThat(log).contains("charon started pid=" + newCharon, "ipsec policies adopted count=6");
        if (sigkill) {
            assertThat(log).contains("stale charon found pid=" + oldCharon, "stale charon ended pid=" + oldCharon);
        }
        assertThat(log).doesNotContain("ipsec peer repaired").doesNotContain("ipsec stray policy deleted");
        assertThat(policyAddTimes(n1)).as("the same policies: adopted, not removed and re-added or replaced").isEqualTo(before);
        assertOneCharonPerNode();
        Overlay.assertEveryPodReachesEveryOther(cluster);

        Duration worst = Duration.ZERO;
        String worstPair = "";
        for (PingTimeline t : timelines) {
            Duration gap = t.longestGapDuring(down, back);
            if (gap.compareTo(worst) > 0) {
                worst = gap;
                worstPair = t.pair();
            }
        }
        System.out.printf("ipsec restart figure (%s, kube mode, in the VM): daemon down to ready %d ms, ready to every pair"
                        + " answering %d ms, longest ping gap %d ms (%s), %d pairs every %d ms%n", how,
                Duration.between(down, up).toMillis(), Duration.between(up, back).toMillis(), worst.toMillis(), worstPair,
                timelines.size(), INTERVAL.toMillis());
    }

    /** One pod per node: node 1's pod and the others, both ways (6 pairs). */
    private List<Pod> onePodPerNode() {
        List<Pod> out = new ArrayList<>();
        for (ClusterNode n : cluster.nodes()) {
            cluster.pods().stream().filter(p -> p.node() == n.index()).findFirst().ifPresent(out::add);
        }
        return out;
    }

    /** Whether every pair touching node 1's pod (the first) had a reply time-stamped after {@code since}. */
    private static boolean answeredSince(Path logs, List<Pod> pods, Instant since) throws IOException {
        for (Pod from : pods) {
            for (Pod to : pods) {
                if (from == to || from != pods.get(0) && to != pods.get(0)) {
                    continue;
                }
                String text = Files.readString(logs.resolve("ping-" + from.namespace() + "-" + to.namespace() + ".log"));
                PingTimeline t = PingTimeline.parse(from, to, since, Instant.now(), text);
                if (t.repliesDuring(since, Instant.now().plusSeconds(1)) == 0) {
                    return false;
                }
            }
        }
        return true;
    }

    /** The node's policies with templates, each as "selector dir add-time" (`ip -s xfrm policy`: the add time is the kernel's). */
    private static Set<String> policyAddTimes(ClusterNode n) throws Exception {
        String text = Cmd.run(Duration.ofSeconds(30), List.of("ip", "-s", "-n", n.namespace(), "xfrm", "policy", "list")).stdout();
        Set<String> out = new TreeSet<>();
        for (String b : text.split("(?m)^(?=src )")) {
            if (!b.contains("tmpl ")) {
                continue;
            }
            Matcher add = Pattern.compile("add (\\S+ \\S+)").matcher(b);
            Matcher dir = Pattern.compile("dir (\\w+)").matcher(b);
            assertThat(add.find() && dir.find()).as("add time and direction in %s", b).isTrue();
            out.add(b.lines().findFirst().orElseThrow().strip() + " dir " + dir.group(1) + " add " + add.group(1));
        }
        return out;
    }

    /** The PID in the node's charon pidfile (its private /run): alive. */
    private long charonPid(ClusterNode n) throws IOException {
        long pid = Long.parseLong(Files.readString(cluster.runDir().resolve(n.name()).resolve("ipsec/charon.pid")).strip());
        assertThat(ProcessHandle.of(pid).filter(ProcessHandle::isAlive)).as("%s's charon pid=%d", n.name(), pid).isPresent();
        return pid;
    }

    /** Exactly one charon per node: the VM runs no other, so the charons alive are the nodes' pidfiles' PIDs, each once. */
    private void assertOneCharonPerNode() throws IOException {
        Set<Long> fromPidfiles = new TreeSet<>();
        for (ClusterNode n : cluster.nodes()) {
            fromPidfiles.add(charonPid(n));
        }
        Set<Long> alive = new TreeSet<>();
        try (var procs = Files.list(Path.of("/proc"))) {
            for (Path p : procs.filter(p -> p.getFileName().toString().chars().allMatch(Character::isDigit)).toList()) {
                try {
                    if (Files.readString(p.resolve("comm")).strip().equals("charon")) {
                        alive.add(Long.parseLong(p.getFileName().toString()));
                    }
                } catch (IOException e) {
                    // ended meanwhile
                }
            }
        }
        assertThat(alive).as("the charons running: one per node (pidfiles %s)", fromPidfiles).isEqualTo(fromPidfiles);
        assertThat(fromPidfiles).hasSize(cluster.nodes().size());
        assertThat(Arrays.asList(fromPidfiles.toArray())).doesNotHaveDuplicates();
    }
}
