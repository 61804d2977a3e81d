package org.jflannel.subnet.kube;

import org.jflannel.core.Ip4Net;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseAttrs;
import org.jflannel.core.SubnetManager;
import org.jflannel.subnet.SubnetManagerContract;

import java.net.Inet4Address;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import org.jflannel.testsupport.kube.ApiCall;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

/**
 * The SubnetManager contract on fabric8's mock API server (with our Node patch extension). Every
 * request the managers make during the run is recorded; after the run each must be granted by the
 * ClusterRole in {@code manifests/base/rbac.yml}, and the role grants nothing that no call used: the
 * ClusterRole is exactly the set of calls the code makes.
 */
class KubeSubnetManagerContractTest extends SubnetManagerContract {

    private static final List<ApiCall> CALLS = new CopyOnWriteArrayList<>();

    /** The daemon's whole path, beyond the contract: node name from the pod, public IP and MAC reads, NetworkUnavailable. */
    @Test
    void daemonPathUsesOnlyWhatTheClusterRoleGrants() throws Exception {
        KubeFixture kube = ((Fixture) store).kube;
        kube.admin.pods().inNamespace("kube-flannel").resource(new PodBuilder().withNewMetadata().withName("flannel-ds-x")
                .endMetadata().withNewSpec().withNodeName(OWN_NODE).endSpec().build()).create();
        kube.server.clearCalls();

        KubeSubnetManager m = kube.manager(Map.of("POD_NAME", "flannel-ds-x", "POD_NAMESPACE", "kube-flannel"));
        m.nodePublicIp();
        m.storedVtepMac(false);
        Lease own = m.acquireLease(ownAttrs("0e:00:00:00:00:01"));
        Recorder rec = watch(m);
        rec.awaitBatches(1);
        m.completeLease(own);

        assertThat(kube.server.calls()).extracting(ApiCall::verb, ApiCall::rbacResource).contains(
                tuple("get", "pods"), tuple("list", "nodes"), tuple("watch", "nodes"), tuple("get", "nodes"),
                tuple("patch", "nodes/status"));
    }

    @AfterAll
    static void everyRecordedCallIsGrantedByTheClusterRole() throws Exception {
        try (KubernetesClient parser = new KubernetesClientBuilder().build()) {
            RbacManifest rbac = RbacManifest.load(parser);
            List<String> denied = CALLS.stream().filter(c -> !rbac.allows(c))
                    .map(c -> c.verb() + " " + c.rbacResource() + " (" + c.path() + ")").distinct().toList();
            org.slf4j.LoggerFactory.getLogger(KubeSubnetManagerContractTest.class).info("manager API calls: {}",
                    CALLS.stream().map(c -> c.verb() + " " + c.rbacResource()).distinct().sorted().toList());
            assertThat(CALLS).isNotEmpty();
            assertThat(denied).as("API calls not granted by ClusterRole flannel in %s", RbacManifest.FILE).isEmpty();
            // and no more: every grant was used by some call (non-resource requests need no grant)
            java.util.SortedSet<String> used = CALLS.stream().filter(c -> !c.resource().isEmpty())
                    .map(RbacManifest::grant).collect(java.util.stream.Collectors.toCollection(java.util.TreeSet::new));
            assertThat(rbac.grants()).as("ClusterRole flannel in %s vs the calls the kube subnet manager made",
                    RbacManifest.FILE).containsExactlyElementsOf(used);
        }
    }

    private static final class Fixture implements StoreFixture {
        final KubeFixture kube;
        private final Path dir;

        Fixture(KubeFixture kube, Path dir) {
            this.kube = kube;
            this.dir = dir;
        }

        @Override
        public SubnetManager newManager(String nodeName, Inet4Address publicIp) throws Exception {
            if (kube.admin.nodes().withName(nodeName).get() == null) {
                kube.putNode(nodeName, List.of(kube.v4Cidr(nodeName)), Map.of());
            }
            return kube.manager(nodeName);
        }

        @Override
        public Lease putPeer(String nodeName, Inet4Address publicIp, String backendData) {
            String cidr = kube.v4Cidr(nodeName);
            kube.putNode(nodeName, List.of(cidr), KubeFixture.upstreamAnnotations(publicIp.getHostAddress(), backendData));
            return new Lease(Ip4Net.parse(cidr), null, new LeaseAttrs(publicIp, null, "vxlan", backendData, null), null);
        }

        @Override
        public void removePeer(String nodeName) {
            kube.admin.nodes().withName(nodeName).delete();
        }

        @Override
        public Malformed putMalformedPeer(String nodeName) {
            kube.putNode(nodeName, List.of(kube.v4Cidr(nodeName)),
                    KubeFixture.upstreamAnnotations(MALFORMED_PEER_IP.getHostAddress(), "{\"VNI\":1,\"VtepMAC\":"));
            return new Malformed(nodeName, KubeFixture.KEYS.backendData());
        }

        @Override
        public void close() throws Exception {
            // the admin client's own requests (the test playing the cluster) are not the manager's
            CALLS.addAll(kube.server.calls().stream().filter(c -> !c.userAgent().equals(KubeFixture.ADMIN_AGENT)).toList());
            kube.close();
            try (var files = Files.walk(dir)) {
                files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    @Override
    protected StoreFixture openFixture() throws Exception {
        Path dir = Files.createTempDirectory("jflannel-kube");
        KubeFixture kube = new KubeFixture(dir, KubeFixture.NET_CONF);
        kube.putNode(OWN_NODE, List.of(kube.v4Cidr(OWN_NODE)), Map.of());
        return new Fixture(kube, dir);
    }
}
