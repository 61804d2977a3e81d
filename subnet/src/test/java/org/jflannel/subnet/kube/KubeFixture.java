package org.jflannel.subnet.kube;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import org.jflannel.testsupport.kube.KubeMockServer;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A mock API server with nodes, a net-conf.json file, and kube subnet managers on it, for tests.
 * Peers are annotated exactly as upstream flanneld annotates its node (REFERENCE §4.2).
 */
final class KubeFixture implements AutoCloseable {

    static final String NET_CONF = "{\"Network\":\"10.244.0.0/16\",\"Backend\":{\"Type\":\"vxlan\"}}";
    static final String DUAL_NET_CONF = "{\"EnableIPv6\":true,\"Network\":\"10.42.0.0/16\",\"IPv6Network\":\"2001:cafe:42::/56\","
            + "\"Backend\":{\"Type\":\"vxlan\"}}";
    static final KubeAnnotations KEYS = new KubeAnnotations("flannel.alpha.coreos.com/");

    final KubeMockServer server = KubeMockServer.start();
    /** The test playing the rest of the cluster; its requests carry User-Agent {@value #ADMIN_AGENT}. */
    final KubernetesClient admin = adminClient(server);
    static final String ADMIN_AGENT = "jflannel-test-admin";
    final Path dir;
    private final List<AutoCloseable> toClose = new ArrayList<>();
    private final Map<String, Integer> subnets = new HashMap<>();
    private KubeOptions options;

    KubeFixture(Path dir, String netConf) throws IOException {
        this.dir = dir;
        Path conf = dir.resolve("net-conf.json");
        Files.writeString(conf, netConf);
        options = KubeOptions.defaults().withNetConfPath(conf)
                .withTimings(Duration.ofSeconds(20), Duration.ofMillis(100), Duration.ofSeconds(5));
    }

    private static KubernetesClient adminClient(KubeMockServer server) {
        try (KubernetesClient plain = server.newClient()) {
            return new io.fabric8.kubernetes.client.KubernetesClientBuilder().withConfig(
                    new io.fabric8.kubernetes.client.ConfigBuilder(plain.getConfiguration()).withUserAgent(ADMIN_AGENT).build()).build();
        }
    }

    KubeOptions options() {
        return options;
    }

    KubeFixture options(KubeOptions o) {
        options = o;
        return this;
    }

    /** A manager for {@code nodeName} (NODE_NAME), on its own client; both closed with the fixture. */
    KubeSubnetManager manager(String nodeName) throws Exception {
        return manager(Map.of("NODE_NAME", nodeName));
    }

    KubeSubnetManager manager(Map<String, String> env) throws Exception {
        KubernetesClient client;
        try (KubernetesClient plain = server.newClient()) {
            client = KubeClients.build(plain.getConfiguration());
        }
        toClose.add(client);
        KubeSubnetManager m = KubeSubnetManager.start(client, options, env, Clock.systemUTC());
        toClose.add(m);
        return m;
    }

    /** The pod CIDR a test node gets: 10.244.N.0/24 (or 10.42.N.0/24 + 2001:cafe:42:N::/64 dual stack), stable per name. */
    int index(String name) {
        return subnets.computeIfAbsent(name, n -> subnets.size() + 1);
    }

    /** Creates (or replaces the annotations of) node {@code name}. */
    Node putNode(String name, List<String> podCidrs, Map<String, String> annotations) {
        Node existing = admin.nodes().withName(name).get();
        if (existing == null) {
            return admin.nodes().resource(new NodeBuilder()
                    .withNewMetadata().withName(name).withAnnotations(new HashMap<>(annotations)).endMetadata()
                    .withNewSpec().withPodCIDR(podCidrs.isEmpty() ? null : podCidrs.get(0))
                    .withPodCIDRs(podCidrs.isEmpty() ? null : podCidrs).endSpec()
                    .withNewStatus().addNewCondition().withType("Ready").withStatus("True").endCondition().endStatus()
                    .build()).create();
        }
        return admin.nodes().withName(name).edit(n -> {
            n.getMetadata().setAnnotations(new HashMap<>(annotations));
            return n;
        });
    }

    /** Upstream's annotations of a vxlan IPv4 node. */
    static Map<String, String> upstreamAnnotations(String publicIp, String backendData) {
        return Map.of(
                KEYS.subnetKubeManaged(), "true",
                KEYS.backendType(), "vxlan",
                KEYS.backendData(), backendData,
                KEYS.publicIp(), publicIp);
    }

    String v4Cidr(String name) {
        return "10.244." + index(name) + ".0/24";
    }

    @Override
    public void close() throws Exception {
        for (int i = toClose.size() - 1; i >= 0; i--) {
            toClose.get(i).close();
        }
        admin.close();
        server.close();
    }
}
