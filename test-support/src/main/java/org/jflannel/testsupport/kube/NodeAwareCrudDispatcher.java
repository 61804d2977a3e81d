package org.jflannel.testsupport.kube;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.mockwebserver.crud.Attribute;
import io.fabric8.mockwebserver.crud.AttributeSet;
import io.fabric8.mockwebserver.dsl.HttpMethod;
import io.fabric8.mockwebserver.http.Buffer;
import io.fabric8.mockwebserver.http.Headers;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
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
    /** Changes kept for watches to resume from; older resourceVersions are answered 410 Gone. */
    static final int HISTORY = 10_000;

    private final ObjectMapper json = new ObjectMapper();
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
        MockResponse refused = admit(request);
        return refused != null ? refused : super.dispatch(request);
    }

    /**
     * Records {@code request} and applies the injected faults: returns the failure to answer with,
     * or null to serve it. The HTTP front calls this itself for watches, which it serves without
     * {@link #dispatch}.
     */
    MockResponse admit(RecordedRequest request) {
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
        return null;
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

    // ---- watches: the history the HTTP front's WatchHub serves them from ----

    /** A consistent starting point for a watch: the selected objects and the resourceVersion they are at. */
    record Snapshot(long rv, List<String> items) {
    }

    private final WatchLog watchLog = new WatchLog(HISTORY);

    WatchLog watchLog() {
        return watchLog;
    }

    /**
     * Every stored change also goes to the watch history, with the resourceVersion the change got
     * (a deletion gets a new one, as on a real server). Runs under the store's write lock, so the
     * history is in resourceVersion order and a list taken under the read lock is consistent with it.
     */
    @Override
    public void processEvent(String path, AttributeSet pathAttributes, AttributeSet oldAttributes,
                             GenericKubernetesResource resource, String newState) {
        String existing = oldAttributes == null ? null : map.get(oldAttributes);
        super.processEvent(path, pathAttributes, oldAttributes, resource, newState);
        if (Objects.equals(existing, newState)) {
            return;
        }
        try {
            if (newState == null) {
                long rv = requestResourceVersion();
                ObjectNode gone = (ObjectNode) json.readTree(existing);
                if (gone.get("metadata") instanceof ObjectNode metadata) {
                    metadata.put("resourceVersion", Long.toString(rv));
                }
                watchLog.append(new WatchLog.Change(rv, oldAttributes, null, gone.toString()));
                return;
            }
            AttributeSet after = attributeExtractor.fromResource(newState);
            if (!after.containsKey("plural")) {
                after = AttributeSet.merge(pathAttributes, after);
            }
            long rv = json.readTree(newState).path("metadata").path("resourceVersion").asLong(0);
            watchLog.append(new WatchLog.Change(rv > 0 ? rv : requestResourceVersion(), oldAttributes, after, newState));
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("stored object is not JSON: " + e.getOriginalMessage(), e);
        }
    }

    /** What a watch selects: the collection (and label selector) of its path, and its name if one was given. */
    AttributeSet watchQuery(WatchRequest request) {
        AttributeSet q = attributeExtractor.fromPath(request.listPath());
        return request.name().isEmpty() ? q : q.add(new Attribute("name", request.name()));
    }

    /** The objects a watch starts with and their resourceVersion, read under the store's read lock. */
    Snapshot snapshot(WatchRequest request) {
        MockResponse list = super.handleGet(request.listPath());
        try {
            JsonNode body = json.readTree(list.getBody().readUtf8());
            List<String> items = new ArrayList<>();
            for (JsonNode item : body.path("items")) {
                if (request.name().isEmpty() || request.name().equals(item.path("metadata").path("name").asText())) {
                    items.add(item.toString());
                }
            }
            return new Snapshot(body.path("metadata").path("resourceVersion").asLong(0), items);
        } catch (JsonProcessingException e) {
            throw new IllegalStateException("list of " + request.listPath() + " is not JSON: " + e.getOriginalMessage(), e);
        }
    }

    /** Lists say what they hold ({@code NodeList}), as client-go needs to decode them; the stock mock says {@code List}. */
    @Override
    public MockResponse handleGet(String path) {
        MockResponse response = super.handleGet(path);
        ApiCall call = ApiCall.of("GET", path, "", "");
        ResourceKinds.Kind kind = ResourceKinds.of(path);
        if (response.code() != 200 || !call.verb().equals("list") || !call.subresource().isEmpty() || !kind.known()
                || response.getBody() == null) {
            return response;
        }
        try {
            JsonNode body = json.readTree(response.getBody().readUtf8());
            if (body.isObject() && "List".equals(body.path("kind").asText())) {
                ((ObjectNode) body).put("kind", kind.kind() + "List");
                ((ObjectNode) body).put("apiVersion", kind.apiVersion());
            }
            if (body instanceof ObjectNode o && path.indexOf('?') >= 0) {
                ListPages.apply(o, path.substring(path.indexOf('?') + 1));
            }
            return response.setBody(body.toString());
        } catch (JsonProcessingException e) {
            return status(500, "InternalError", "list of " + path + " is not JSON: " + e.getOriginalMessage());
        }
    }

    /** Watches never reach the store: the HTTP front serves them from the history ({@link WatchHub}). */
    @Override
    public MockResponse handleWatch(String path) {
        return status(500, "InternalError", "watch " + path + " reached the store; serve it through WatchHub");
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
