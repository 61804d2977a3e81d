package org.jflannel.flanneld.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import org.jflannel.flanneld.testing.Await;
import org.jflannel.flanneld.testing.DaemonProcess;
import org.jflannel.flanneld.testing.ThrowawayNs;
import org.jflannel.testsupport.etcd.TcpProxy;
import org.jflannel.testsupport.kube.KubeMockServer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Kube mode with a slow API server (issue 23): 400 ms injected on every chunk between the daemon
 * and the mock API server while a burst of Node changes happens. The peer already programmed keeps
 * its entries throughout, and the burst ends in the state of its last write (a peer whose VTEP moved
 * twice is at the last MAC; a peer added and deleted is gone): events applied in order.
 */
@Tag("netns")
class DaemonKubeLatencyIT {
    private static final String P = DaemonKubeIT.P;
    private static final Duration LATENCY = Duration.ofMillis(400);

    @Test
    void aSlowApiServerLeavesTheDataPlaneAloneAndAppliesChangesInOrder(@TempDir Path dir) throws Exception {
        Path netConf = dir.resolve("net-conf.json");
        Files.writeString(netConf, "{\"Network\": \"10.244.0.0/16\", \"Backend\": {\"Type\": \"vxlan\"}}");
        String noSystemd = dir.resolve("no-systemd.sock").toString();
        try (KubeMockServer api = KubeMockServer.start();
             KubernetesClient client = api.newClient();
             ThrowawayNs ns = ThrowawayNs.node("fdl")) {
            client.nodes().resource(node("node-1", "10.244.1.0/24", Map.of())).create();
            client.nodes().resource(node("node-2", "10.244.2.0/24", peer("192.0.2.20", "0e:00:00:00:00:02"))).create();
            ns.exec("ip", "link", "set", "lo", "up");
            try (TcpProxy fwd = TcpProxy.inNamespace(ns.netns(), 6443, api.port());
                 DaemonProcess d = DaemonProcess.start(ns.execPrefix(), Map.of("NODE_NAME", "node-1", "NOTIFY_SOCKET", noSystemd),
                         "--kube-subnet-mgr", "--kube-api-url=http://127.0.0.1:6443", "--net-config-path=" + netConf,
                         "--subnet-file=" + dir.resolve("subnet.env"))) {
                assertThat(d.awaitStderr(s -> s.contains("lease snapshot programmed"), DaemonKubeIT.WAIT)).as("%s", d.stderr()).isTrue();
                String untouched = entriesOfNode2(ns);
                // "nhid N" between the two: routes go through nexthop objects by default
                assertThat(untouched).contains("10.244.2.0/24 ", "via 10.244.2.0 dev flannel.1 onlink")
                        .contains("0e:00:00:00:00:02");

                fwd.setLatency(LATENCY);
                client.nodes().resource(node("node-3", "10.244.3.0/24", peer("192.0.2.30", "0e:00:00:00:00:03"))).create();
                moveVtep(client, "node-3", "0e:00:00:00:00:13");
                moveVtep(client, "node-3", "0e:00:00:00:00:23");
                client.nodes().resource(node("node-4", "10.244.4.0/24", peer("192.0.2.40", "0e:00:00:00:00:04"))).create();
                client.nodes().withName("node-4").delete();

                int[] samples = new int[1];
                boolean settled = Await.until(() -> {
                    assertThat(entriesOfNode2(ns)).as("node-2's entries while the API server is slow").isEqualTo(untouched);
                    samples[0]++;
                    return ns.exec("ip", "neigh", "show", "10.244.3.0", "dev", "flannel.1").contains("0e:00:00:00:00:23")
                            && ns.exec("bridge", "fdb", "show", "dev", "flannel.1").contains("0e:00:00:00:00:23 dst 192.0.2.30")
                            && ns.exec("ip", "route", "show", "10.244.4.0/24").isBlank();
                }, Duration.ofSeconds(60));
                assertThat(settled).as("the burst's last state reached; log:\n%s", d.stderr()).isTrue();
                assertThat(ns.exec("bridge", "fdb", "show", "dev", "flannel.1")).as("no stale VTEP of node-3")
                        .doesNotContain("0e:00:00:00:00:03").doesNotContain("0e:00:00:00:00:13");
                assertThat(entriesOfNode2(ns)).isEqualTo(untouched);
                System.out.println("slow API server (" + LATENCY.toMillis() + " ms): node-2 untouched over " + samples[0]
                        + " samples, node-3 at its last VTEP, node-4 gone");
                fwd.setLatency(Duration.ZERO);
                d.terminate();
                assertThat(d.waitFor(DaemonKubeIT.WAIT)).isZero();
            }
        }
    }

    private static String entriesOfNode2(ThrowawayNs ns) throws Exception {
        return ns.exec("ip", "route", "show", "10.244.2.0/24") + ns.exec("ip", "neigh", "show", "10.244.2.0", "dev", "flannel.1")
                + ns.exec("bridge", "fdb", "show", "dev", "flannel.1").lines().filter(l -> l.contains("dst 192.0.2.20 "))
                        .reduce("", (a, b) -> a + b + "\n");
    }

    private static void moveVtep(KubernetesClient client, String name, String mac) {
        client.nodes().withName(name).edit(n -> {
            n.getMetadata().getAnnotations().put(P + "backend-data", "{\"VNI\":1,\"VtepMAC\":\"" + mac + "\"}");
            return n;
        });
    }

    private static Map<String, String> peer(String publicIp, String mac) {
        Map<String, String> a = new HashMap<>();
        a.put(P + "kube-subnet-manager", "true");
        a.put(P + "backend-type", "vxlan");
        a.put(P + "public-ip", publicIp);
        a.put(P + "backend-data", "{\"VNI\":1,\"VtepMAC\":\"" + mac + "\"}");
        return a;
    }

    private static Node node(String name, String podCidr, Map<String, String> annotations) {
        return new NodeBuilder().withNewMetadata().withName(name).withAnnotations(annotations).endMetadata()
                .withNewSpec().withPodCIDR(podCidr).withPodCIDRs(podCidr).endSpec().build();
    }
}
