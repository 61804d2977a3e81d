package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.jflannel.core.MacAddress;
import org.jflannel.testsupport.cluster.ClusterNode;
import org.jflannel.testsupport.cluster.ClusterOptions;
import org.jflannel.testsupport.cluster.ClusterPerClass;
import org.jflannel.testsupport.cluster.ClusterOptions.Mode;
import org.jflannel.testsupport.cluster.ManagedProcess;
import org.jflannel.testsupport.cluster.NetnsCluster;
import org.jflannel.testsupport.cluster.NodeLease;
import org.jflannel.testsupport.cluster.UpstreamFlannel;
import org.jflannel.testsupport.cluster.Wait;
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
 * A mixed cluster in Kubernetes mode: ours on node1 and node2, upstream flanneld v0.20.2
 * ({@code $JFLANNEL_UPSTREAM_DIR/flanneld}, client-go) with {@code --kube-subnet-mgr} on node3, all on
 * one mock API server, vxlan. Node3 first runs ours (the harness starts every node alike), then is
 * swapped: ours killed, its flannel annotations and {@code flannel.1} removed, upstream started with
 * the same flags, a kubeconfig and {@code NODE_NAME}, so every annotation of node3 is upstream's own
 * and its VTEP MAC is new. Each side must program the other from the annotations it reads: ours
 * through its informer, upstream through client-go's list and chunked watch (the mock once refused
 * that watch: "Failed to watch *v1.Node: the server rejected our request for an unknown reason").
 */
@Tag("e2e")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class KubeMixedClusterIT {
    private static final String PREFIX = "flannel.alpha.coreos.com/";
    private static final Duration WITHIN = Duration.ofSeconds(60);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final String UPSTREAM_AGENT = "flanneld/";

    @RegisterExtension
    static final ClusterPerClass CLUSTER = ClusterPerClass.of(ClusterOptions.defaults().withMode(Mode.KUBE))
            .requiring(UpstreamFlannel::flanneld); // skipped before the cluster is built when upstream's is not provided
    private final NetnsCluster cluster;
    private ManagedProcess upstream;
    private ClusterNode upstreamNode;

    KubeMixedClusterIT(NetnsCluster cluster) {
        this.cluster = cluster;
    }

    @BeforeAll
    void swapNode3ToUpstream() throws Exception {
        Path flanneld = UpstreamFlannel.flanneld();
        upstreamNode = cluster.node(3);
        upstream = swapToUpstream(upstreamNode, flanneld);
    }

    /** Before the cluster goes (after this class's last method): the harness did not start this process. */
    @AfterAll
    void killUpstream() throws Exception {
        if (upstream != null) {
            upstream.kill();
        }
    }

    private ManagedProcess swapToUpstream(ClusterNode node, Path flanneld) throws Exception {
        node.kill();
        forgetFlannel(node);
        List<String> cmd = new ArrayList<>(node.command());
        cmd.replaceAll(a -> a.equals(cluster.options().flanneldLauncher().toString()) ? flanneld.toString() : a);
        Files.writeString(node.dir().resolve("upstream.cmd"), String.join(" ", cmd));
        ManagedProcess p = ManagedProcess.start("upstream-flanneld@" + node.name(), cmd,
                Map.of("NODE_NAME", node.name()), node.dir().resolve("upstream-flanneld.log"));
        System.out.println("cluster: " + node.name() + ": upstream flanneld started pid=" + p.pid() + ": " + cmd);
        return p;
    }

    /** Drops the node's flannel annotations and its VTEP, so the next flanneld starts from nothing of the last one's. */
    private void forgetFlannel(ClusterNode node) throws Exception {
        cluster.patchKubeNode(node.name(), "{\"metadata\":{\"annotations\":{\"" + PREFIX + "kube-subnet-manager\":null,\""
                + PREFIX + "backend-type\":null,\"" + PREFIX + "backend-data\":null,\"" + PREFIX + "public-ip\":null}}}");
        node.deleteVxlanDevice();
    }

    private MacAddress publishedMac(ClusterNode node) throws Exception {
        JsonNode annotations = cluster.kubeNode(node.name()).path("metadata").path("annotations");
        String data = annotations.path(PREFIX + "backend-data").asText("");
        return data.isEmpty() ? null : MacAddress.parse(JSON.readTree(data).path("VtepMAC").asText());
    }

    /** Waits until {@code on}'s kernel reaches {@code peer} at the VTEP MAC {@code mac} (neighbour and FDB). */
    private void awaitProgrammed(ClusterNode on, ClusterNode peer, MacAddress mac) throws Exception {
        NodeLease lease = peer.lease();
        Wait.until(on.name() + " programs " + peer.name() + " at " + mac, WITHIN, on::entries,
                e -> e.neighbour(lease.subnetAddress()).map(n -> mac.equals(n.mac())).orElse(false)
                        && e.fdbTo(lease.publicIp()).stream().anyMatch(f -> mac.equals(f.mac()))
                        && !e.routesTo(lease.subnet()).isEmpty());
    }

    private List<JsonNode> upstreamCalls(String verbAndResource) throws Exception {
        List<JsonNode> out = new ArrayList<>();
        cluster.kubeApiCalls().forEach(c -> {
            if (c.path("userAgent").asText().startsWith(UPSTREAM_AGENT)
                    && (c.path("verb").asText() + " " + c.path("resource").asText()).equals(verbAndResource)) {
                out.add(c);
            }
        });
        return out;
    }

    @Test
    @Order(1)
    void eachSideProgramsTheOtherFromItsAnnotationsAndEveryPodReachesEveryOther() throws Exception {
        MacAddress upstreamMac = Wait.until("upstream's own annotations on " + upstreamNode.name(), WITHIN, () -> {
            if (!upstream.isAlive()) {
                throw new Wait.Abort("upstream flanneld exited: " + upstream.logTail(30));
            }
            MacAddress published = publishedMac(upstreamNode);
            var link = upstreamNode.entries().link();
            return published != null && link != null && published.equals(link.mac()) ? published : null;
        }, java.util.Objects::nonNull);
        JsonNode annotations = cluster.kubeNode(upstreamNode.name()).path("metadata").path("annotations");
        assertThat(annotations.path(PREFIX + "kube-subnet-manager").asText()).isEqualTo("true");
        assertThat(annotations.path(PREFIX + "backend-type").asText()).isEqualTo("vxlan");
        assertThat(annotations.path(PREFIX + "public-ip").asText()).isEqualTo(upstreamNode.publicIp().getHostAddress());

        for (ClusterNode ours : List.of(cluster.node(1), cluster.node(2))) {
            awaitProgrammed(ours, upstreamNode, upstreamMac); // ours read upstream's annotations
            awaitProgrammed(upstreamNode, ours, publishedMac(ours)); // upstream read ours'
        }
        Overlay.assertExactlyOneEntryPerPeer(cluster);
        Overlay.assertEveryPodReachesEveryOther(cluster);

        assertThat(upstreamCalls("watch nodes")).as("upstream's client-go watches nodes").isNotEmpty();
        assertThat(upstreamCalls("patch nodes/status")).as("upstream patched its annotations").isNotEmpty();
        assertThat(upstream.logText()).doesNotContain("Failed to watch").doesNotContain("failed to list");
    }

    @Test
    @Order(2)
    void upstreamFollowsANodeThatChangedItsVtepThroughItsWatchWithoutRelisting() throws Exception {
        ClusterNode restarted = cluster.node(1);
        int listsBefore = upstreamCalls("list nodes").size();
        restarted.kill();
        forgetFlannel(restarted);
        restarted.start();
        restarted.awaitReady();
        MacAddress fresh = Wait.until(restarted.name() + " publishes its new VTEP MAC", WITHIN, () -> {
            MacAddress published = publishedMac(restarted);
            return published != null && published.equals(linkMac(restarted)) ? published : null;
        }, java.util.Objects::nonNull);

        awaitProgrammed(upstreamNode, restarted, fresh);
        awaitProgrammed(cluster.node(2), restarted, fresh);
        awaitProgrammed(restarted, upstreamNode, publishedMac(upstreamNode));
        assertThat(upstreamCalls("list nodes")).as("upstream learnt it from its watch, not a relist")
                .hasSize(listsBefore);
        for (ClusterNode ours : List.of(cluster.node(1), cluster.node(2))) {
            var e = ours.entries();
            assertThat(e.fdb()).as("FDB on %s: the old VTEP's entry replaced", ours.name()).hasSize(2);
            assertThat(e.routes().stream().filter(r -> r.dst() != null && r.dst().toString().startsWith("10.244.")))
                    .as("routes on %s", ours.name()).hasSize(2);
        }
        // upstream v0.20.2 adds the new VTEP's FDB entry and leaves the old one (its vxlan handler never
        // deletes on a changed lease): node3 keeps a stale entry for node1's old MAC, harmless as the
        // neighbour entry points at the new MAC
        assertThat(upstreamNode.entries().fdbTo(restarted.publicIp())).as("node3's FDB entries for node1")
                .anyMatch(f -> fresh.equals(f.mac()));
        Overlay.assertEveryPodReachesEveryOther(cluster);
        assertThat(upstream.logText()).doesNotContain("Failed to watch");
    }

    private static MacAddress linkMac(ClusterNode n) throws Exception {
        var link = n.entries().link();
        return link == null ? null : link.mac();
    }
}
