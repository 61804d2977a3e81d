package org.jflannel.testsupport.kube;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.mockwebserver.dsl.HttpMethod;
import io.fabric8.mockwebserver.http.Buffer;
import io.fabric8.mockwebserver.http.Headers;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.fabric8.mockwebserver.http.WebSocketListener;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * fabric8's CRUD dispatcher, made to answer Node patches as a real API server does, and recording
 * every request it receives (for RBAC checks).
 *
 * <p>The stock CRUD mock rejects strategic merge patches (415) and, for {@code /status}, keeps the
 * stored metadata, while a real API server (nodeStatusStrategy) applies both patch types to the whole
 * object and then restores only {@code spec} from the stored Node. flannel relies on exactly that: it
 * patches its annotations and the NetworkUnavailable condition through {@code nodes/<name>/status}.
 * Here such a patch is applied by {@link StrategicMergePatch} and handed to the CRUD store as a JSON
 * patch of metadata/spec/status carrying the resourceVersion it was computed from, so the store keeps
 * its own locking, resource versions and watch events; a concurrent change (409) is retried.
 */
public class NodeAwareCrudDispatcher extends KubernetesCrudDispatcher {

    static final String STRATEGIC_MERGE = "application/strategic-merge-patch+json";
    static final String MERGE_PATCH = "application/merge-patch+json";
    private static final Pattern NODE_PATH = Pattern.compile("^/api/v1/nodes/([^/?]+)(/status)?/?(\\?.*)?$");
    private static final int MAX_CONFLICT_RETRIES = 20;

    private final ObjectMapper json = new ObjectMapper();
    /** A short-lived daemon thread per closed watch (closes are rare; no pool to outlive the server). */
    private static final java.util.concurrent.Executor WATCH_CLOSER = r -> {
        Thread t = new Thread(r, "kube-mock-watch-close");
        t.setDaemon(true);
        t.start();
    };
    private final List<ApiCall> calls = new ArrayList<>();

    /** Injected failures: the next {@code remaining} requests matching method + path prefix get {@code code}. */
    private record Fault(String method, String pathPrefix, int code, java.util.concurrent.atomic.AtomicInteger remaining) {
    }

    private final List<Fault> faults = new java.util.concurrent.CopyOnWriteArrayList<>();

    /** Makes the next {@code times} requests with {@code method} whose path starts with {@code pathPrefix} fail with {@code code}. */
    public void failNext(String method, String pathPrefix, int times, int code) {
        faults.add(new Fault(method, pathPrefix, code, new java.util.concurrent.atomic.AtomicInteger(times)));
    }

    @Override
    public MockResponse dispatch(RecordedRequest request) {
        String body = request.getBody() == null ? "" : new String(request.getBody().getBytes(), java.nio.charset.StandardCharsets.UTF_8);
        synchronized (calls) {
            calls.add(ApiCall.of(request.getMethod(), request.getPath(), request.getHeader("Content-Type"), body,
                    request.getHeader("User-Agent")));
        }
        for (Fault f : faults) {
            if (f.method().equalsIgnoreCase(request.getMethod()) && request.getPath().startsWith(f.pathPrefix())
                    && f.remaining().getAndUpdate(n -> Math.max(0, n - 1)) > 0) {
                return status(f.code(), "InternalError", "injected failure");
            }
        }
        return super.dispatch(request);
    }

    /** Every request received so far, in order. */
    public List<ApiCall> calls() {
        synchronized (calls) {
            return List.copyOf(calls);
        }
    }

    public void clearCalls() {
        synchronized (calls) {
            calls.clear();
        }
    }

    /** fabric8's watch, with its close handling moved off the event loop ({@link OffLoopCloseListener}). */
    @Override
    public MockResponse handleWatch(String path) {
        MockResponse response = super.handleWatch(path);
        WebSocketListener inner = response.getWebSocketListener();
        return inner == null ? response : response.withWebSocketUpgrade(new OffLoopCloseListener(inner, WATCH_CLOSER));
    }

    @Override
    public MockResponse handlePatch(RecordedRequest request) {
        Matcher m = NODE_PATH.matcher(request.getPath());
        String type = mediaType(request.getHeader("Content-Type"));
        if (!m.matches() || !(type.equals(STRATEGIC_MERGE) || type.equals(MERGE_PATCH))) {
            return super.handlePatch(request);
        }
        try {
            JsonNode patch = json.readTree(request.getBody().readUtf8());
            return patchNode(request, m.group(1), m.group(2) != null, type.equals(STRATEGIC_MERGE), patch);
        } catch (JsonProcessingException e) {
            return status(400, "BadRequest", "invalid patch: " + e.getOriginalMessage());
        }
    }

    private MockResponse patchNode(RecordedRequest request, String name, boolean statusPath, boolean strategic,
                                   JsonNode patch) throws JsonProcessingException {
        String nodePath = "/api/v1/nodes/" + name;
        for (int attempt = 0; attempt < MAX_CONFLICT_RETRIES; attempt++) {
            MockResponse current = handleGet(nodePath);
            if (current.code() == 404) {
                return status(404, "NotFound", "nodes \"" + name + "\" not found");
            }
            JsonNode stored = json.readTree(current.getBody().readUtf8());
            String storedVersion = stored.path("metadata").path("resourceVersion").asText("");
            String wanted = patch.path("metadata").path("resourceVersion").asText("");
            if (!wanted.isEmpty() && !wanted.equals(storedVersion)) {
                return status(409, "Conflict", "the object has been modified; please apply your changes to the latest version");
            }
            JsonNode merged = strategic ? StrategicMergePatch.apply(stored, patch) : StrategicMergePatch.applyMergePatch(stored, patch);
            MockResponse response = super.handlePatch(asJsonPatch(request, nodePath, stored, merged, statusPath));
            if (response.code() != 409) {
                return response.code() == 202 ? response.setResponseCode(200) : response;
            }
        }
        return status(409, "Conflict", "too many concurrent changes to node " + name);
    }

    /** A JSON patch setting metadata (identity and version kept), spec and status as the real server would. */
    private RecordedRequest asJsonPatch(RecordedRequest original, String nodePath, JsonNode stored, JsonNode merged,
                                        boolean statusPath) throws JsonProcessingException {
        ObjectNode metadata = merged.path("metadata").isObject() ? (ObjectNode) merged.get("metadata").deepCopy() : json.createObjectNode();
        for (String kept : List.of("name", "uid", "creationTimestamp", "resourceVersion")) {
            if (stored.path("metadata").has(kept)) {
                metadata.set(kept, stored.get("metadata").get(kept));
            }
        }
        // nodeStatusStrategy keeps the stored spec; nodeStrategy keeps the stored status
        JsonNode spec = statusPath ? stored.get("spec") : merged.get("spec");
        JsonNode status = statusPath ? merged.get("status") : stored.get("status");
        ArrayNode ops = json.createArrayNode();
        ops.add(op("/metadata", metadata));
        if (spec != null) {
            ops.add(op("/spec", spec));
        }
        if (status != null) {
            ops.add(op("/status", status));
        }
        Headers headers = Headers.builder().add("Content-Type", "application/json-patch+json").build();
        return new RecordedRequest(original.getHttpVersion(), HttpMethod.PATCH, nodePath, headers,
                new Buffer().writeUtf8(json.writeValueAsString(ops)));
    }

    private ObjectNode op(String path, JsonNode value) {
        ObjectNode op = json.createObjectNode();
        op.put("op", "add");
        op.put("path", path);
        op.set("value", value);
        return op;
    }

    private static String mediaType(String contentType) {
        if (contentType == null) {
            return "";
        }
        int semi = contentType.indexOf(';');
        return (semi < 0 ? contentType : contentType.substring(0, semi)).trim().toLowerCase(Locale.ROOT);
    }

    private MockResponse status(int code, String reason, String message) {
        ObjectNode s = json.createObjectNode();
        s.put("apiVersion", "v1");
        s.put("kind", "Status");
        s.put("status", "Failure");
        s.put("message", message);
        s.put("reason", reason);
        s.put("code", code);
        return new MockResponse().setResponseCode(code).setBody(s.toString());
    }
}
