package org.jflannel.testsupport.cluster;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.jflannel.testsupport.kube.NodeAwareCrudDispatcher;

/**
 * The Kubernetes mock API server as a process, listening on a given address (the fabric bridge, so
 * the node namespaces reach it), with a line protocol on stdin/stdout through which the harness
 * plays the controller manager and kubelet: create Nodes with podCIDRs and a Ready condition,
 * read them back, delete them. One request per line, one answer per line ({@code ok [json]} or
 * {@code err <message>}); end-of-file on stdin stops the server.
 *
 * <pre>
 * create-node NAME POD_CIDR INTERNAL_IP
 * create-node-json NODE_JSON   (a whole Node on one line, e.g. one annotated as another flannel wrote it)
 * get-node NAME
 * delete-node NAME
 * calls            (every request but the harness's own: verb, RBAC resource, name, content type, user agent)
 * </pre>
 */
public final class KubeApiServerMain {
    private static final ObjectMapper JSON = new ObjectMapper();
    /** User-Agent of the harness's own client, so its requests can be told from flanneld's. */
    static final String HARNESS_AGENT = "jflannel-harness";

    private KubeApiServerMain() {
    }

    /** {@code KubeApiServerMain HOST PORT}. */
    public static void main(String[] args) throws IOException {
        if (args.length != 2) {
            System.err.println("usage: KubeApiServerMain HOST PORT");
            System.exit(2);
        }
        InetAddress host = InetAddress.getByName(args[0]);
        int port = Integer.parseInt(args[1]);
        NodeAwareCrudDispatcher dispatcher = new NodeAwareCrudDispatcher();
        KubernetesMockServer server = new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(),
                dispatcher, false);
        server.init(host, port);
        String url = "http://" + host.getHostAddress() + ":" + server.getPort();
        Config config = new ConfigBuilder(Config.empty()).withMasterUrl(url).withUserAgent(HARNESS_AGENT).build();
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        try (KubernetesClient client = new KubernetesClientBuilder().withConfig(config).build()) {
            out.println("ready " + url);
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                out.println(answer(client, dispatcher, line.strip()));
            }
        } finally {
            server.destroy();
        }
    }

    static String answer(KubernetesClient client, NodeAwareCrudDispatcher dispatcher, String line) {
        List<String> words = List.of(line.split("\\s+"));
        try {
            return switch (words.get(0)) {
                case "create-node" -> "ok " + JSON.writeValueAsString(
                        client.nodes().resource(node(words.get(1), words.get(2), words.get(3))).create());
                case "create-node-json" -> "ok " + JSON.writeValueAsString(client.nodes().resource(
                        JSON.readValue(line.substring(line.indexOf(' ') + 1), Node.class)).create());
                case "get-node" -> {
                    Node n = client.nodes().withName(words.get(1)).get();
                    yield n == null ? "err node " + words.get(1) + " not found" : "ok " + JSON.writeValueAsString(n);
                }
                case "delete-node" -> {
                    client.nodes().withName(words.get(1)).delete();
                    yield "ok";
                }
                case "calls" -> "ok " + JSON.writeValueAsString(calls(dispatcher));
                default -> "err unknown command: " + words.get(0);
            };
        } catch (IndexOutOfBoundsException e) {
            return "err missing argument in: " + line;
        } catch (Exception e) {
            return "err " + String.valueOf(e.getMessage()).replace('\n', ' ');
        }
    }

    private static List<Map<String, String>> calls(NodeAwareCrudDispatcher dispatcher) {
        return dispatcher.calls().stream().filter(c -> !c.userAgent().startsWith(HARNESS_AGENT))
                .map(c -> Map.of("verb", c.verb(), "resource", c.rbacResource(), "name", c.name(),
                        "contentType", c.contentType(), "userAgent", c.userAgent()))
                .toList();
    }

    /** A Node as kubelet registers it and the node-ipam controller completes it: podCIDR(s), InternalIP, Ready. */
    static Node node(String name, String podCidr, String internalIp) {
        return new NodeBuilder()
                .withNewMetadata().withName(name).withLabels(Map.of("kubernetes.io/hostname", name)).endMetadata()
                .withNewSpec().withPodCIDR(podCidr).withPodCIDRs(podCidr).endSpec()
                .withNewStatus()
                .addNewAddress().withType("InternalIP").withAddress(internalIp).endAddress()
                .addNewAddress().withType("Hostname").withAddress(name).endAddress()
                .addNewCondition().withType("Ready").withStatus("True").withReason("KubeletReady")
                .withMessage("kubelet is posting ready status").endCondition()
                .endStatus()
                .build();
    }
}
