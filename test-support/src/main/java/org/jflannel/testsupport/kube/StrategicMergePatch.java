package org.jflannel.testsupport.kube;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Applies a patch to a Node's JSON as the Kubernetes API server does, for the two patch types
 * flannel-like clients send: strategic merge patch ({@code application/strategic-merge-patch+json})
 * and JSON merge patch (RFC 7386, {@code application/merge-patch+json}).
 *
 * <p>Strategic merge: maps merge recursively, {@code null} deletes a key, lists that the Node schema
 * declares with a merge key ({@code status.conditions} by {@code type}, ...) merge element by element,
 * {@code metadata.finalizers} is a set union, every other list is replaced. The directives
 * {@code $patch: replace|delete} are honoured, {@code $setElementOrder/...} and {@code $retainKeys}
 * are accepted and ignored (they only order or prune, which no test here depends on).
 */
public final class StrategicMergePatch {

    /** The Node (core/v1) lists with {@code patchStrategy: merge}, by path, and their merge keys. */
    private static final Map<String, String> MERGE_KEYS = Map.of(
            "status.conditions", "type",
            "status.addresses", "type",
            "status.volumesAttached", "name",
            "spec.taints", "key",
            "metadata.ownerReferences", "uid");

    /** Lists of scalars with {@code patchStrategy: merge}: the patch's values are added. */
    private static final Set<String> MERGED_SCALAR_LISTS = Set.of("metadata.finalizers");

    private StrategicMergePatch() {
    }

    /** Returns {@code target} with the strategic merge {@code patch} applied; neither argument is modified. */
    public static JsonNode apply(JsonNode target, JsonNode patch) {
        return merge(target == null ? null : target.deepCopy(), patch, "");
    }

    /** Returns {@code target} with the JSON merge patch {@code patch} applied (RFC 7386). */
    public static JsonNode applyMergePatch(JsonNode target, JsonNode patch) {
        if (!patch.isObject()) {
            return patch.deepCopy();
        }
        ObjectNode result = target != null && target.isObject()
                ? (ObjectNode) target.deepCopy() : JsonNodeFactory.instance.objectNode();
        for (Iterator<Map.Entry<String, JsonNode>> it = patch.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            if (e.getValue().isNull()) {
                result.remove(e.getKey());
            } else {
                result.set(e.getKey(), applyMergePatch(result.get(e.getKey()), e.getValue()));
            }
        }
        return result;
    }

    private static JsonNode merge(JsonNode target, JsonNode patch, String path) {
        if (!patch.isObject()) {
            return patch.deepCopy();
        }
        String directive = patch.path("$patch").asText("");
        if (directive.equals("replace")) {
            ObjectNode copy = patch.deepCopy();
            copy.remove("$patch");
            return copy;
        }
        ObjectNode result = target != null && target.isObject() ? (ObjectNode) target : JsonNodeFactory.instance.objectNode();
        for (Iterator<Map.Entry<String, JsonNode>> it = patch.fields(); it.hasNext(); ) {
            Map.Entry<String, JsonNode> e = it.next();
            String key = e.getKey();
            if (key.startsWith("$")) {
                continue;
            }
            JsonNode value = e.getValue();
            String childPath = path.isEmpty() ? key : path + "." + key;
            if (value.isNull() || value.path("$patch").asText("").equals("delete")) {
                result.remove(key);
            } else if (value.isArray()) {
                result.set(key, mergeList(result.get(key), (ArrayNode) value, childPath));
            } else {
                result.set(key, merge(result.get(key), value, childPath));
            }
        }
        return result;
    }

    private static JsonNode mergeList(JsonNode target, ArrayNode patch, String path) {
        String mergeKey = MERGE_KEYS.get(path);
        if (target == null || !target.isArray()) {
            return stripDirectives(patch);
        }
        if (MERGED_SCALAR_LISTS.contains(path)) {
            ArrayNode result = target.deepCopy();
            for (JsonNode v : patch) {
                if (!contains(result, v)) {
                    result.add(v.deepCopy());
                }
            }
            return result;
        }
        if (mergeKey == null) {
            return stripDirectives(patch);
        }
        List<JsonNode> elements = new ArrayList<>();
        target.forEach(elements::add);
        for (JsonNode item : patch) {
            int at = indexOf(elements, mergeKey, item.path(mergeKey));
            boolean delete = item.path("$patch").asText("").equals("delete");
            if (delete) {
                if (at >= 0) {
                    elements.remove(at);
                }
            } else if (at >= 0) {
                elements.set(at, merge(elements.get(at), item, path));
            } else {
                elements.add(merge(null, item, path));
            }
        }
        ArrayNode result = patch.arrayNode();
        elements.forEach(result::add);
        return result;
    }

    private static JsonNode stripDirectives(ArrayNode list) {
        ArrayNode result = list.arrayNode();
        for (JsonNode item : list) {
            if (item.isObject()) {
                ObjectNode copy = item.deepCopy();
                copy.remove("$patch");
                result.add(copy);
            } else {
                result.add(item.deepCopy());
            }
        }
        return result;
    }

    private static int indexOf(List<JsonNode> elements, String mergeKey, JsonNode keyValue) {
        for (int i = 0; i < elements.size(); i++) {
            if (elements.get(i).path(mergeKey).equals(keyValue)) {
                return i;
            }
        }
        return -1;
    }

    private static boolean contains(ArrayNode list, JsonNode value) {
        for (JsonNode v : list) {
            if (v.equals(value)) {
                return true;
            }
        }
        return false;
    }
}
