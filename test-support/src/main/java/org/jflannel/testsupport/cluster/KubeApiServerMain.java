package org.jflannel.testsupport.cluster;

import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.jflannel.testsupport.kube.KubeMockServer;

/**
 * The Kubernetes mock API server ({@link KubeMockServer}) as a process, listening on a given address (the fabric bridge, so
 * the node namespaces reach it), with a line protocol on stdin/stdout through which the harness
 * plays the controller manager and kubelet: create Nodes with podCIDRs and a Ready condition,
 * read them back, delete them (through the server's second, loopback front, so they work during an
 * outage of the first, as through another API server replica). One request per line, one answer per line ({@code ok [json]} or
 * {@code err <message>}); end-of-file on stdin stops the server.
 *
 * <pre>
 * create-node NAME POD_CIDR INTERNAL_IP   (dual stack: POD_CIDR and INTERNAL_IP each "v4,v6")
 * create-node-json NODE_JSON   (a whole Node on one line, e.g. one annotated as another flannel wrote it)
 * get-node NAME
 * delete-node NAME
 * calls            (every request but the harness's own: verb, RBAC resource, name, content type, user agent)
 * patch-node NAME JSON   (a strategic merge patch of the Node, e.g. to change an annotation)
 * stop-serving / resume-serving     (an API server outage: connections dropped, the store kept)
 * hold-watches / release-watches    (open watches get no changes meanwhile)
 * expire-watches   (history compacted, every open watch answered 410 Gone: clients must relist)
 * apply-json OBJECT_JSON    (any object, e.g. a Namespace, Pod or NetworkPolicy: created, or replaced when it exists)
 * delete-json OBJECT_JSON   (the object of that kind, namespace and name deleted)
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
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        try (KubeMockServer server = KubeMockServer.start(host, port, KubeMockServer.BOOKMARK_EVERY);
             // the request timeout scaled as the harness's bounds: under the kernel VM's TCG a request can take seconds
             KubernetesClient client = server.newClient(b -> b.withConfig(new ConfigBuilder(Config.empty())
                     .withMasterUrl(server.adminUrl()).withUserAgent(HARNESS_AGENT)
                     .withRequestTimeout((int) Bounds.scaled(java.time.Duration.ofSeconds(30)).toMillis()).build()))) {
            out.println("ready " + server.url());
            BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            for (String line = in.readLine(); line != null; line = in.readLine()) {
                out.println(answer(client, server, line.strip()));
            }
        }
    }

    /**
     * Creates one of the harness's nodes. The client retries a request that timed out; under the kernel VM's TCG the
     * first POST may have been served meanwhile, and its retry then meets it ("Node 'node1' already exists"): that
     * node, created by this very call, is the answer.
     */
    private static Node create(KubernetesClient client, Node node) {
        try {
            return client.nodes().resource(node).create();
        } catch (io.fabric8.kubernetes.client.KubernetesClientException e) {
            Node existing = e.getCode() == 409 ? client.nodes().withName(node.getMetadata().getName()).get() : null;
            if (existing == null || !java.util.Objects.equals(existing.getSpec(), node.getSpec())) {
                throw e;
            }
            return existing;
        }
    }

    static String answer(KubernetesClient client, KubeMockServer server, String line) {
        List<String> words = List.of(line.split("\\s+"));
        try {
            return switch (words.get(0)) {
                case "create-node" -> "ok " + JSON.writeValueAsString(create(client, node(words.get(1), words.get(2), words.get(3))));
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
                case "apply-json" -> "ok " + JSON.writeValueAsString(client.resource(line.substring(line.indexOf(' ') + 1))
                        .createOr(io.fabric8.kubernetes.client.dsl.NonDeletingOperation::update));
                case "delete-json" -> {
                    client.resource(line.substring(line.indexOf(' ') + 1)).delete();
                    yield "ok";
                }
                case "calls" -> "ok " + JSON.writeValueAsString(calls(server));
                case "patch-node" -> "ok " + JSON.writeValueAsString(client.nodes().withName(words.get(1))
                        .patch(PatchContext.of(PatchType.STRATEGIC_MERGE), line.substring(line.indexOf('{'))));
                case "stop-serving" -> {
                    server.stopServing();
                    yield "ok";
                }
                case "resume-serving" -> {
                    server.resumeServing();
                    yield "ok";
                }
                case "hold-watches" -> {
                    server.holdWatches(true);
                    yield "ok";
                }
                case "release-watches" -> {
                    server.holdWatches(false);
                    yield "ok";
                }
                case "expire-watches" -> {
                    server.expireWatches();
                    yield "ok";
                }
                default -> "err unknown command: " + words.get(0);
            };
        } catch (IndexOutOfBoundsException e) {
            return "err missing argument in: " + line;
        } catch (Exception e) {
            return "err " + (String.valueOf(e.getMessage()) + (e.getCause() == null ? "" : ": " + e.getCause())).replace('\n', ' ');
        }
    }

    private static List<Map<String, String>> calls(KubeMockServer server) {
        return server.calls().stream().filter(c -> !c.userAgent().startsWith(HARNESS_AGENT))
                .map(c -> Map.of("verb", c.verb(), "resource", c.rbacResource(), "name", c.name(),
                        "contentType", c.contentType(), "userAgent", c.userAgent()))
                .toList();
    }

    /**
     * A Node as kubelet registers it and the node-ipam controller completes it: podCIDR(s), InternalIP,
     * Ready, and the annotations kubelet and the node controller always put on it. A real Node is never
     * without annotations, and upstream flanneld v0.20.2 relies on it: on a Node without any, its
     * AcquireLease writes into a nil map and panics ("assignment to entry in nil map", kube.go:335).
     */
    static Node node(String name, String podCidr, String internalIp) {
        List<String> cidrs = List.of(podCidr.split(","));
        List<io.fabric8.kubernetes.api.model.NodeAddress> addresses = new java.util.ArrayList<>();
        for (String ip : internalIp.split(",")) {
            addresses.add(new io.fabric8.kubernetes.api.model.NodeAddress(ip, "InternalIP"));
        }
        addresses.add(new io.fabric8.kubernetes.api.model.NodeAddress(name, "Hostname"));
        return new NodeBuilder()
                .withNewMetadata().withName(name).withLabels(Map.of("kubernetes.io/hostname", name))
                .withAnnotations(Map.of("volumes.kubernetes.io/controller-managed-attach-detach", "true",
                        "node.alpha.kubernetes.io/ttl", "0")).endMetadata()
                .withNewSpec().withPodCIDR(cidrs.get(0)).withPodCIDRs(cidrs).endSpec()
                .withNewStatus()
                .withAddresses(addresses)
                .addNewCondition().withType("Ready").withStatus("True").withReason("KubeletReady")
                .withMessage("kubelet is posting ready status").endCondition()
                .endStatus()
                .build();
    }
}
