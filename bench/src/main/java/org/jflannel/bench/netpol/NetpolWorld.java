package org.jflannel.bench.netpol;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.Map;
import java.util.Random;
import org.jflannel.testsupport.kube.KubeMockServer;

/**
 * The API stand-in holding NetpolLatency's world, for a flanneld to run against (bench/netpol-rss.py): on
 * 127.0.0.1:PORT (of the network namespace it runs in), NODES Nodes {@code n1..n10} with their podCIDRs, 20
 * namespaces, PODS pods spread over the nodes (a tenth on n1), POLICIES policies; then prints {@code ready url=...} and
 * serves until its standard input closes.
 *
 * <pre>java -cp bench/target/benchmarks.jar org.jflannel.bench.netpol.NetpolWorld PORT PODS POLICIES</pre>
 */
public final class NetpolWorld {
    private NetpolWorld() {
    }

    public static void main(String[] args) throws Exception {
        int port = Integer.parseInt(args[0]);
        int pods = Integer.parseInt(args[1]);
        int policies = Integer.parseInt(args[2]);
        Random random = new Random(42);
        try (KubeMockServer server = KubeMockServer.start(port);
             KubernetesClient client = server.newClient()) {
            for (int n = 1; n <= NetpolLatency.NODES; n++) {
                String cidr = "10." + (100 + n) + ".0.0/16";
                client.nodes().resource(new NodeBuilder().withNewMetadata().withName("n" + n).endMetadata()
                        .withNewSpec().withPodCIDR(cidr).withPodCIDRs(cidr).endSpec().build()).create();
            }
            for (int n = 0; n < NetpolLatency.NAMESPACES; n++) {
                Map<String, String> l = Map.of("kubernetes.io/metadata.name", "ns" + n, "team", "t" + (n % 5));
                client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName("ns" + n).withLabels(l).endMetadata()
                        .build()).create();
            }
            for (int i = 0; i < pods; i++) {
                Pod p = NetpolLatency.pod(i, random.nextInt(NetpolLatency.APPS),
                        NetpolLatency.TIERS.get(random.nextInt(NetpolLatency.TIERS.size())));
                client.pods().inNamespace(p.getMetadata().getNamespace()).resource(p).create();
            }
            for (int i = 0; i < policies; i++) {
                NetworkPolicy np = NetpolLatency.policy(i, random);
                client.network().v1().networkPolicies().inNamespace(np.getMetadata().getNamespace()).resource(np).create();
            }
            System.out.println("ready url=" + server.url() + " pods=" + pods + " policies=" + policies);
            System.out.flush();
            while (System.in.read() >= 0) {
                continue; // serve until the driver closes our stdin
            }
        }
    }
}
