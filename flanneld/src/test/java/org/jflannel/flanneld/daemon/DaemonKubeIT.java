package org.jflannel.flanneld.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.NodeCondition;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
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
 * The daemon in kube mode, as a process in a throwaway namespace, against fabric8's mock API server
 * (test-support's dispatcher: strategic merge patch, metadata through /status) reached through a
 * namespace-side port forward: annotations and NetworkUnavailable on the own node, the peer's
 * entries programmed and removed with its Node, SIGTERM → exit 0.
 */
@Tag("netns")
class DaemonKubeIT {
    static final Duration WAIT = Duration.ofSeconds(90);
    static final String P = "flannel.alpha.coreos.com/";

    @Test
    void annotatesTheNodeProgramsThePeerAndStopsCleanly(@TempDir Path dir) throws Exception {
        Path netConf = dir.resolve("net-conf.json");
        Files.writeString(netConf, "{\"Network\": \"10.244.0.0/16\", \"Backend\": {\"Type\": \"vxlan\"}}");
        Path subnetFile = dir.resolve("subnet.env");
        String noSystemd = dir.resolve("no-systemd.sock").toString(); // nobody listens: READY=1 fails, the daemon goes on
        try (KubeMockServer api = KubeMockServer.start();
             KubernetesClient client = api.newClient();
             ThrowawayNs ns = ThrowawayNs.node("fdk")) {
            client.nodes().resource(node("node-1", "10.244.1.0/24", Map.of())).create();
            client.nodes().resource(node("node-2", "10.244.2.0/24", Map.of(
                    P + "kube-subnet-manager", "true", P + "backend-type", "vxlan", P + "public-ip", "192.0.2.20",
                    P + "backend-data", "{\"VNI\":1,\"VtepMAC\":\"0e:00:00:00:00:02\"}"))).create();
            ns.exec("ip", "link", "set", "lo", "up");
            try (TcpProxy fwd = TcpProxy.inNamespace(ns.netns(), 6443, api.port());
                 DaemonProcess d = DaemonProcess.start(ns.execPrefix(), Map.of("NODE_NAME", "node-1", "NOTIFY_SOCKET", noSystemd),
                         "--kube-subnet-mgr", "--kube-api-url=http://127.0.0.1:6443", "--net-config-path=" + netConf,
                         "--subnet-file=" + subnetFile)) {
                assertThat(d.awaitStderr(s -> s.contains("lease snapshot programmed"), WAIT)).as("%s", d.stderr()).isTrue();
                assertThat(Files.readString(subnetFile)).isEqualTo(
                        "FLANNEL_NETWORK=10.244.0.0/16\nFLANNEL_SUBNET=10.244.1.1/24\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=false\n");
                assertThat(ns.exec("ip", "route", "show", "10.244.2.0/24"))
                        // "nhid N" between the two: routes go through nexthop objects by default
                        .contains("10.244.2.0/24 ", "via 10.244.2.0 dev flannel.1 onlink");

                String mac = ns.exec("cat", "/sys/class/net/flannel.1/address").trim();
                Node own = client.nodes().withName("node-1").get();
                assertThat(own.getMetadata().getAnnotations()).containsEntry(P + "kube-subnet-manager", "true")
                        .containsEntry(P + "backend-type", "vxlan").containsEntry(P + "public-ip", "192.0.2.10")
                        .containsEntry(P + "backend-data", "{\"VNI\":1,\"VtepMAC\":\"" + mac + "\"}");
                assertThat(Await.until(() -> networkUnavailable(client) != null, Duration.ofSeconds(30))).isTrue();
                assertThat(networkUnavailable(client).getStatus()).isEqualTo("False");
                assertThat(networkUnavailable(client).getReason()).isEqualTo("FlannelIsUp");
                assertThat(d.stderr()).contains("sd_notify READY=1 failed error=sendto NOTIFY_SOCKET=" + noSystemd + ": ENOENT (2)");

                client.nodes().withName("node-2").delete();
                assertThat(Await.until(() -> ns.exec("ip", "route", "show", "10.244.2.0/24").isBlank(), Duration.ofSeconds(30)))
                        .isTrue();

                d.terminate();
                assertThat(d.waitFor(WAIT)).isZero();
                assertThat(d.stderr()).contains("Exiting cleanly...");
            }
        }
    }

    private static NodeCondition networkUnavailable(KubernetesClient client) {
        Node n = client.nodes().withName("node-1").get();
        if (n.getStatus() == null || n.getStatus().getConditions() == null) {
            return null;
        }
        return n.getStatus().getConditions().stream().filter(c -> c.getType().equals("NetworkUnavailable")).findFirst().orElse(null);
    }

    private static Node node(String name, String podCidr, Map<String, String> annotations) {
        return new NodeBuilder().withNewMetadata().withName(name).withAnnotations(annotations).endMetadata()
                .withNewSpec().withPodCIDR(podCidr).withPodCIDRs(podCidr).endSpec().build();
    }
}
