package org.jflannel.subnet.kube;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Map;

/**
 * Our own Node on the API server: patches go, as upstream sends them, as strategic merge patches to
 * the {@code status} subresource (RBAC grants only {@code nodes/status: patch}); reads are direct GETs.
 */
final class OwnNodeClient {

    private static final Logger LOG = LoggerFactory.getLogger(OwnNodeClient.class);
    private static final ObjectMapper JSON = new ObjectMapper();
    private static final PatchContext STRATEGIC_MERGE = PatchContext.of(PatchType.STRATEGIC_MERGE);

    private final KubernetesClient client;
    private final String name;

    OwnNodeClient(KubernetesClient client, String name) {
        this.client = client;
        this.name = name;
    }

    /** GET /api/v1/nodes/name; null when it does not exist. */
    Node get() {
        return client.nodes().withName(name).get();
    }

    /**
     * Sends {@code {"metadata":{"annotations":{...}}}}, retrying every {@code interval} up to
     * {@code timeout}; then fails with upstream's message.
     */
    void patchAnnotations(Map<String, String> annotations, Duration interval, Duration timeout)
            throws IOException, InterruptedException {
        ObjectNode patch = JSON.createObjectNode();
        annotations.forEach(patch.putObject("metadata").putObject("annotations")::put);
        String body = write(patch);
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            try {
                sendStatusPatch(body);
                LOG.info("node annotations patched node={} keys={}", name, annotations.keySet());
                return;
            } catch (KubernetesClientException e) {
                LOG.error("Failed to patch node: {} node={}", e.getMessage(), name);
                if (System.nanoTime() + interval.toNanos() - deadline > 0) {
                    throw new IOException("timeout contacting kube-api, failed to patch node \"" + name
                            + "\". Error: " + e.getMessage(), e);
                }
                Thread.sleep(interval.toMillis());
            }
        }
    }

    /** NetworkUnavailable=False, reason FlannelIsUp, both times {@code now} (REFERENCE §4.6). */
    void setNetworkAvailable(Instant now) {
        String time = now.truncatedTo(ChronoUnit.SECONDS).toString();
        ObjectNode patch = JSON.createObjectNode();
        ObjectNode condition = patch.putObject("status").putArray("conditions").addObject();
        condition.put("type", "NetworkUnavailable");
        condition.put("status", "False");
        condition.put("lastHeartbeatTime", time);
        condition.put("lastTransitionTime", time);
        condition.put("reason", "FlannelIsUp");
        condition.put("message", "Flannel is running on this node");
        sendStatusPatch(write(patch));
    }

    private void sendStatusPatch(String body) {
        client.nodes().withName(name).subresource("status").patch(STRATEGIC_MERGE, body);
    }

    private static String write(ObjectNode node) {
        try {
            return JSON.writeValueAsString(node);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException(e); // a tree of strings always serialises
        }
    }
}
