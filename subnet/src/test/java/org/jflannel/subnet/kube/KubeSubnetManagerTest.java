package org.jflannel.subnet.kube;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeCondition;
import io.fabric8.kubernetes.api.model.PodBuilder;
import org.jflannel.core.ConfigException;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseAttrs;
import org.jflannel.core.LeaseEvent;
import org.jflannel.core.MacAddress;
import org.jflannel.testsupport.kube.ApiCall;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Kube-specific behaviour of the manager on the mock API server (REFERENCE §4). */
class KubeSubnetManagerTest {

    private static final KubeAnnotations K = KubeFixture.KEYS;
    private static final String MAC = "0e:00:00:00:00:01";

    @TempDir
    Path dir;
    private KubeFixture kube;

    @BeforeEach
    void open() throws Exception {
        kube = new KubeFixture(dir, KubeFixture.NET_CONF);
        kube.putNode("me", List.of("10.244.1.0/24"), Map.of());
    }

    @AfterEach
    void close() throws Exception {
        kube.close();
    }

    private static LeaseAttrs attrs(String ip, String mac) throws Exception {
        return new LeaseAttrs((Inet4Address) InetAddress.getByName(ip), null, "vxlan", "{\"VNI\":1,\"VtepMAC\":\"" + mac + "\"}", null);
    }

    private List<ApiCall> patches() {
        return kube.server.calls().stream().filter(c -> c.verb().equals("patch")).toList();
    }

    private Map<String, String> annotations(String node) {
        return kube.admin.nodes().withName(node).get().getMetadata().getAnnotations();
    }

    @Test
    void acquireAnnotatesTheNodeThroughStatusWithAStrategicMergePatchOnce() throws Exception {
        KubeSubnetManager m = kube.manager("me");

        Lease lease = m.acquireLease(attrs("192.0.2.10", MAC));
        awaitInformer(m, v -> "true".equals(v.annotation(K.subnetKubeManaged())));
        m.acquireLease(attrs("192.0.2.10", MAC));

        assertThat(lease.key()).isEqualTo("10.244.1.0-24");
        assertThat(lease.expiration()).isNotNull();
        assertThat(patches()).hasSize(1);
        ApiCall patch = patches().get(0);
        assertThat(patch.path()).startsWith("/api/v1/nodes/me/status");
        assertThat(patch.contentType()).startsWith("application/strategic-merge-patch+json");
        assertThat(patch.body()).startsWith("{\"metadata\":{\"annotations\":{");
        assertThat(annotations("me")).containsAllEntriesOf(Map.of(
                K.subnetKubeManaged(), "true", K.backendType(), "vxlan", K.publicIp(), "192.0.2.10",
                K.backendData(), "{\"VNI\":1,\"VtepMAC\":\"" + MAC + "\"}"));
    }

    @Test
    void changedAttributesArePatchedAgainWithOnlyWhatDiffers() throws Exception {
        KubeSubnetManager m = kube.manager("me");
        m.acquireLease(attrs("192.0.2.10", MAC));
        awaitInformer(m, v -> "192.0.2.10".equals(v.annotation(K.publicIp())));

        m.acquireLease(attrs("192.0.2.11", MAC));

        assertThat(patches()).hasSize(2);
        assertThat(patches().get(1).body()).isEqualTo("{\"metadata\":{\"annotations\":{\"" + K.publicIp() + "\":\"192.0.2.11\"}}}");
    }

    @Test
    void createConnectsAsTheFlagsSay() throws Exception {
        Path kubeconfig = kube.server.writeKubeconfig(dir.resolve("kubeconfig"));

        try (KubeSubnetManager m = KubeSubnetManager.create(kube.options().withApiAccess(kubeconfig.toString(), ""),
                Map.of("NODE_NAME", "me"))) {
            assertThat(m.name()).isEqualTo("kube");
            assertThat(m.networkConfig().network().toString()).isEqualTo("10.244.0.0/16");
            assertThat(m.acquireLease(attrs("192.0.2.10", MAC)).key()).isEqualTo("10.244.1.0-24");
        }
    }

    @Test
    void failedAnnotationPatchIsRetriedUntilItSucceeds() throws Exception {
        KubeSubnetManager m = kube.manager("me");
        kube.server.failNext("PATCH", "/api/v1/nodes/me/status", 2, 500);

        m.acquireLease(attrs("192.0.2.10", MAC));

        assertThat(patches()).hasSize(3);
        assertThat(annotations("me")).containsEntry(K.publicIp(), "192.0.2.10");
    }

    @Test
    void annotationPatchFailingPastTheRetryLimitIsUpstreamsTimeout() throws Exception {
        // a 3 s retry window: on a loaded 2-core CI machine one PATCH alone can take longer than 500 ms,
        // and the test needs at least two attempts inside the window
        kube.options(kube.options().withTimings(java.time.Duration.ofSeconds(20), java.time.Duration.ofMillis(50),
                java.time.Duration.ofSeconds(3)));
        KubeSubnetManager m = kube.manager("me");
        kube.server.failNext("PATCH", "/api/v1/nodes/me/status", 1_000, 500);

        assertThatThrownBy(() -> m.acquireLease(attrs("192.0.2.10", MAC)))
                .isInstanceOf(java.io.IOException.class)
                .hasMessageStartingWith("timeout contacting kube-api, failed to patch node \"me\". Error: ");
        assertThat(patches().size()).isGreaterThan(1);
    }

    @Test
    void publicIpOverwriteAnnotationWins() throws Exception {
        kube.putNode("me", List.of("10.244.1.0/24"), Map.of(K.publicIpOverwrite(), "203.0.113.9"));
        KubeSubnetManager m = kube.manager("me");

        Lease lease = m.acquireLease(attrs("192.0.2.10", MAC));

        assertThat(annotations("me")).containsEntry(K.publicIp(), "203.0.113.9");
        assertThat(lease.attrs().publicIp().getHostAddress()).isEqualTo("192.0.2.10");
    }

    @Test
    void podCidrNotAssignedIsAnError() throws Exception {
        kube.putNode("bare", List.of(), Map.of());
        KubeSubnetManager m = kube.manager("bare");

        assertThatThrownBy(() -> m.acquireLease(attrs("192.0.2.10", MAC)))
                .isInstanceOf(ConfigException.class).hasMessage("node \"bare\" pod cidr not assigned");
    }

    @Test
    void podCidrOutsideNetworkIsAnError() throws Exception {
        kube.putNode("stray", List.of("10.99.1.0/24"), Map.of());
        KubeSubnetManager m = kube.manager("stray");

        assertThatThrownBy(() -> m.acquireLease(attrs("192.0.2.10", MAC)))
                .isInstanceOf(ConfigException.class)
                .hasMessage("subnet \"10.244.0.0/16\" specified in the flannel net config doesn't contain "
                        + "\"10.99.1.0/24\" PodCIDR of the \"stray\" node");
    }

    @Test
    void ownNodeNeverAppearingTimesOutWithUpstreamsMessage() throws Exception {
        KubeSubnetManager m = kube.manager("ghost");

        assertThatThrownBy(() -> m.acquireLease(attrs("192.0.2.10", MAC)))
                .isInstanceOf(java.io.IOException.class)
                .hasMessageStartingWith("timeout contacting kube-api, failed to patch node \"ghost\". Error: ");
    }

    @Test
    void completeLeaseSetsNetworkUnavailableFalseAndKeepsOtherConditions() throws Exception {
        KubeSubnetManager m = kube.manager("me");
        Lease own = m.acquireLease(attrs("192.0.2.10", MAC));

        m.completeLease(own);

        ApiCall patch = patches().get(patches().size() - 1);
        assertThat(patch.rbacResource()).isEqualTo("nodes/status");
        assertThat(patch.contentType()).startsWith("application/strategic-merge-patch+json");
        assertThat(patch.body()).matches("\\{\"status\":\\{\"conditions\":\\[\\{\"type\":\"NetworkUnavailable\",\"status\":\"False\","
                + "\"lastHeartbeatTime\":\"\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ\",\"lastTransitionTime\":\"[^\"]+\","
                + "\"reason\":\"FlannelIsUp\",\"message\":\"Flannel is running on this node\"}]}}");
        Map<String, NodeCondition> conditions = kube.admin.nodes().withName("me").get().getStatus().getConditions()
                .stream().collect(Collectors.toMap(NodeCondition::getType, c -> c));
        assertThat(conditions).containsOnlyKeys("Ready", "NetworkUnavailable");
        assertThat(conditions.get("NetworkUnavailable").getReason()).isEqualTo("FlannelIsUp");
        assertThat(conditions.get("Ready").getStatus()).isEqualTo("True");
    }

    @Test
    void setNodeNetworkUnavailableFalseSendsNothing() throws Exception {
        kube.options(kube.options().withSetNodeNetworkUnavailable(false));
        KubeSubnetManager m = kube.manager("me");
        Lease own = m.acquireLease(attrs("192.0.2.10", MAC));
        kube.server.clearCalls();

        m.completeLease(own);

        assertThat(kube.server.calls()).isEmpty();
    }

    @Test
    void completeLeaseFailureIsOnlyLogged() throws Exception {
        KubeSubnetManager m = kube.manager("me");
        Lease own = m.acquireLease(attrs("192.0.2.10", MAC));
        kube.admin.nodes().withName("me").delete();

        m.completeLease(own); // no exception
    }

    @Test
    void nodeNameComesFromThePodWithoutNodeName() throws Exception {
        kube.admin.pods().inNamespace("kube-flannel").resource(new PodBuilder().withNewMetadata().withName("flannel-x")
                .endMetadata().withNewSpec().withNodeName("me").endSpec().build()).create();

        KubeSubnetManager m = kube.manager(Map.of("POD_NAME", "flannel-x", "POD_NAMESPACE", "kube-flannel"));

        assertThat(m.nodeName()).isEqualTo("me");
    }

    @Test
    void nodeNameDiscoveryErrorsAreUpstreams() {
        kube.admin.pods().inNamespace("kube-flannel").resource(new PodBuilder().withNewMetadata().withName("unscheduled")
                .endMetadata().withNewSpec().endSpec().build()).create();

        assertThatThrownBy(() -> kube.manager(Map.of("POD_NAME", "p")))
                .hasMessage("env variables POD_NAME and POD_NAMESPACE must be set");
        assertThatThrownBy(() -> kube.manager(Map.of()))
                .hasMessage("env variables POD_NAME and POD_NAMESPACE must be set");
        assertThatThrownBy(() -> kube.manager(Map.of("POD_NAME", "nope", "POD_NAMESPACE", "kube-flannel")))
                .hasMessageStartingWith("error retrieving pod spec for 'kube-flannel/nope': ");
        assertThatThrownBy(() -> kube.manager(Map.of("POD_NAME", "unscheduled", "POD_NAMESPACE", "kube-flannel")))
                .hasMessage("node name not present in pod spec 'kube-flannel/unscheduled'");
    }

    @Test
    void startUpConfigErrorsAreUpstreams() {
        kube.options(kube.options().withAnnotationPrefix("a/b/c"));
        assertThatThrownBy(() -> kube.manager("me")).hasMessage("subnet/kube: prefix can contain at most single slash");

        kube.options(kube.options().withAnnotationPrefix(KubeAnnotations.DEFAULT_PREFIX).withNetConfPath(dir.resolve("missing.json")));
        assertThatThrownBy(() -> kube.manager("me")).hasMessageStartingWith("failed to read net conf: ");

        kube.options(kube.options().withNetConfPath(kube.options().netConfPath()));
        assertThatThrownBy(() -> kube.manager(Map.of("NODE_NAME", "me", "EVENT_QUEUE_DEPTH", "x")))
                .hasMessage("env EVENT_QUEUE_DEPTH=x format error: strconv.Atoi: parsing \"x\": invalid syntax");
    }

    @Test
    void badNetConfIsAParsingError() throws Exception {
        Path conf = dir.resolve("bad.json");
        java.nio.file.Files.writeString(conf, "{\"Network\": 5");
        kube.options(kube.options().withNetConfPath(conf));

        assertThatThrownBy(() -> kube.manager("me")).hasMessageStartingWith("error parsing subnet config: ");
    }

    @Test
    void nodePublicIpAndStoredVtepMacAreReadFromTheOwnNodeWithTheNormalisedPrefix() throws Exception {
        KubeAnnotations custom = KubeAnnotations.forPrefix("example.com/cni");
        kube.putNode("me", List.of("10.244.1.0/24"), Map.of(
                custom.nodePublicIp(), "198.51.100.4",
                custom.nodePublicIpv6(), "2001:db8::4",
                custom.backendData(), "{\"VNI\":1,\"VtepMAC\":\"12:c6:65:89:b4:e3\"}",
                custom.backendV6Data(), "{\"VNI\":1,\"VtepMAC\":\"6a:0b:3e:41:8c:2d\"}"));
        kube.options(kube.options().withAnnotationPrefix("example.com/cni"));
        KubeSubnetManager m = kube.manager("me");

        assertThat(m.nodePublicIp()).contains("198.51.100.4");
        assertThat(m.nodePublicIpv6()).contains("2001:db8::4");
        assertThat(m.storedVtepMac(false)).contains(MacAddress.parse("12:c6:65:89:b4:e3"));
        assertThat(m.storedVtepMac(true)).contains(MacAddress.parse("6a:0b:3e:41:8c:2d"));
    }

    @Test
    void absentOrBrokenStoredDataGivesEmpty() throws Exception {
        kube.putNode("me", List.of("10.244.1.0/24"), Map.of(K.backendData(), "{\"VNI\":1}", K.backendV6Data(), "{x"));
        KubeSubnetManager m = kube.manager("me");

        assertThat(m.nodePublicIp()).isEmpty();
        assertThat(m.storedVtepMac(false)).isEmpty();
        assertThat(m.storedVtepMac(true)).isEmpty();
    }

    @Test
    void informerCacheHoldsOnlyWhatFlannelNeeds() throws Exception {
        kube.putNode("peer", List.of("10.244.2.0/24"), new HashMap<>(Map.of("other.io/x", "y", K.publicIp(), "192.0.2.2")));
        KubeSubnetManager m = kube.manager("me");

        Node cached = awaitSlim(m, "peer");

        assertThat(cached.getMetadata().getAnnotations()).containsOnlyKeys(K.publicIp());
        assertThat(cached.getStatus()).isNull();
        assertThat(cached.getMetadata().getLabels()).isNullOrEmpty();
        assertThat(cached.getSpec().getPodCIDR()).isEqualTo("10.244.2.0/24");
    }

    @Test
    void unmanagedNodesAreIgnored() throws Exception {
        KubeSubnetManager m = kube.manager("me");
        List<LeaseEvent> seen = new ArrayList<>();
        var sub = m.watchLeases(b -> { synchronized (seen) { seen.addAll(b); seen.notifyAll(); } });
        Map<String, String> a = new HashMap<>(KubeFixture.upstreamAnnotations("192.0.2.2", "{}"));
        a.remove(K.subnetKubeManaged());
        kube.putNode("plain", List.of("10.244.2.0/24"), a);
        kube.putNode("flannel", List.of("10.244.3.0/24"), KubeFixture.upstreamAnnotations("192.0.2.3", "{}"));

        awaitEvents(seen, l -> l.stream().anyMatch(e -> e.lease().key().equals("10.244.3.0-24")));
        sub.close();

        assertThat(seen).noneMatch(e -> e.lease().key().equals("10.244.2.0-24"));
    }

    @Test
    void ipv6OnlyAnnotationChangeIsAnEventInDualStack() throws Exception {
        KubeFixture dual = new KubeFixture(dir.resolve("dual").toFile().mkdirs() ? dir.resolve("dual") : dir.resolve("dual"),
                KubeFixture.DUAL_NET_CONF);
        try (dual) {
            dual.putNode("me", List.of("10.42.1.0/24", "2001:cafe:42:1::/64"), Map.of());
            Map<String, String> peer = new HashMap<>(KubeFixture.upstreamAnnotations("192.0.2.2", "{\"VNI\":1,\"VtepMAC\":\"0e:00:00:00:00:02\"}"));
            peer.put(K.publicIpv6(), "fd00::2");
            peer.put(K.backendV6Data(), "{\"VNI\":1,\"VtepMAC\":\"0e:00:00:00:00:62\"}");
            dual.putNode("peer", List.of("10.42.2.0/24", "2001:cafe:42:2::/64"), peer);
            KubeSubnetManager m = dual.manager("me");
            Lease own = m.acquireLease(new LeaseAttrs((Inet4Address) InetAddress.getByName("192.0.2.1"),
                    (Inet6Address) InetAddress.getByName("fd00::1"), "vxlan", "{\"VNI\":1,\"VtepMAC\":\"0e:00:00:00:00:01\"}",
                    "{\"VNI\":1,\"VtepMAC\":\"0e:00:00:00:00:61\"}"));
            assertThat(own.key()).isEqualTo("10.42.1.0-24&2001:cafe:42:1::-64");
            List<LeaseEvent> seen = new ArrayList<>();
            var sub = m.watchLeases(b -> { synchronized (seen) { seen.addAll(b); seen.notifyAll(); } });
            awaitEvents(seen, l -> !l.isEmpty());

            peer.put(K.backendV6Data(), "{\"VNI\":1,\"VtepMAC\":\"0e:00:00:00:00:63\"}");
            dual.putNode("peer", List.of(), peer);

            awaitEvents(seen, l -> l.stream().anyMatch(e -> "{\"VNI\":1,\"VtepMAC\":\"0e:00:00:00:00:63\"}".equals(e.lease().attrs().backendV6Data())));
            sub.close();
            assertThat(seen.get(seen.size() - 1).lease().key()).isEqualTo("10.42.2.0-24&2001:cafe:42:2::-64");
        }
    }

    @Test
    void cacheSyncTimeoutIsFatalUnlessContWhenCacheNotReady() throws Exception {
        int deadPort;
        try (java.net.ServerSocket s = new java.net.ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            deadPort = s.getLocalPort();
        }
        KubeOptions fast = kube.options().withTimings(java.time.Duration.ofSeconds(1), java.time.Duration.ofMillis(100), java.time.Duration.ofSeconds(1));
        io.fabric8.kubernetes.client.Config config = new io.fabric8.kubernetes.client.ConfigBuilder(io.fabric8.kubernetes.client.Config.empty())
                .withMasterUrl("http://127.0.0.1:" + deadPort).build();
        try (var client = KubeClients.build(config)) {
            assertThatThrownBy(() -> KubeSubnetManager.start(client, fast, Map.of("NODE_NAME", "me"), java.time.Clock.systemUTC()))
                    .isInstanceOf(java.io.IOException.class)
                    .hasMessage("timed out waiting for the node informer cache to sync after PT1S");

            try (KubeSubnetManager m = KubeSubnetManager.start(client, fast,
                    Map.of("NODE_NAME", "me", "CONT_WHEN_CACHE_NOT_READY", "true"), java.time.Clock.systemUTC())) {
                assertThat(m.informerForTest().synced()).isFalse();
            }
        }
    }

    // ---- bounded waits ----

    private static void awaitEvents(List<LeaseEvent> seen, Predicate<List<LeaseEvent>> cond) throws InterruptedException {
        long deadline = System.nanoTime() + 20_000_000_000L;
        synchronized (seen) {
            while (!cond.test(seen)) {
                long left = (deadline - System.nanoTime()) / 1_000_000;
                if (left <= 0) {
                    throw new AssertionError("condition not met within 20 s; events " + seen);
                }
                seen.wait(left);
            }
        }
    }

    private static Node awaitSlim(KubeSubnetManager m, String name) throws InterruptedException {
        return Waits.until(() -> m.informerForTest().getSlim(name).orElse(null), "node " + name + " in the informer cache");
    }

    @Test
    void ownNodeDeletedAndRegisteredAgainBareGetsItsAnnotationsAndConditionBack() throws Exception {
        KubeSubnetManager m = kube.manager("me");
        m.acquireLease(attrs("192.0.2.10", MAC));
        m.completeLease(null);
        awaitInformer(m, v -> "true".equals(v.annotation(K.subnetKubeManaged())));

        kube.admin.nodes().withName("me").delete();
        Waits.until(() -> m.informerForTest().get("me").isEmpty() ? true : null, "own node gone from the cache");
        kube.putNode("me", List.of("10.244.1.0/24"), Map.of()); // as kubelet registers it again: no annotations

        Waits.until(() -> "true".equals(annotations("me").get(K.subnetKubeManaged())) ? true : null,
                "own node annotated again");
        assertThat(annotations("me")).containsAllEntriesOf(Map.of(K.backendType(), "vxlan", K.publicIp(), "192.0.2.10",
                K.backendData(), "{\"VNI\":1,\"VtepMAC\":\"" + MAC + "\"}"));
        Waits.until(() -> kube.admin.nodes().withName("me").get().getStatus().getConditions().stream()
                .anyMatch(c -> c.getType().equals("NetworkUnavailable") && c.getStatus().equals("False")) ? true : null,
                "NetworkUnavailable=False again");
    }

    @Test
    void aStillManagedOwnNodeIsLeftAloneByTheGuard() throws Exception {
        KubeSubnetManager m = kube.manager("me");
        m.acquireLease(attrs("192.0.2.10", MAC));
        awaitInformer(m, v -> "true".equals(v.annotation(K.subnetKubeManaged())));

        kube.admin.nodes().withName("me").edit(n -> {
            n.getMetadata().getAnnotations().put(K.publicIp(), "192.0.2.99");
            return n;
        });
        awaitInformer(m, v -> "192.0.2.99".equals(v.annotation(K.publicIp())));
        m.acquireLease(attrs("192.0.2.10", MAC)); // a later acquire puts it right, as upstream's does

        assertThat(patches().stream().filter(c -> c.path().startsWith("/api/v1/nodes/me/status")))
                .as("the two acquires' patches, none from the guard").hasSize(2);
    }

    private static void awaitInformer(KubeSubnetManager m, Predicate<NodeView> cond) throws InterruptedException {
        Waits.until(() -> m.informerForTest().get(m.nodeName()).filter(cond).orElse(null), "own node updated in the cache");
    }
}
