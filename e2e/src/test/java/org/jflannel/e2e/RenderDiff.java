package org.jflannel.e2e;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Object-by-object differences between two renderings (ours and upstream's chart, same values), on
 * a normalized form so that a difference means a difference to the cluster: objects by
 * {@code Kind/namespace/name}; containers, env, mounts, ports, volumes and pull secrets by name (with
 * the order of the containers both have checked apart); a container's {@code command} + {@code args}
 * as the one list the runtime executes ({@code exec}), kube-flannel's split into the program and its
 * flags (our image's launcher path differs, the flags must not); cni-conf.json and net-conf.json
 * parsed as JSON.
 */
final class RenderDiff {
    /** One difference: where (object and path), and each side's value ({@code null}: absent on that side). */
    record Difference(String where, String ours, String upstream) {
        @Override
        public String toString() {
            return where + ": ours " + (ours == null ? "absent" : ours) + ", upstream " + (upstream == null ? "absent" : upstream);
        }
    }

    private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
    private static final ObjectMapper JSON = new ObjectMapper();
    /** Upstream's chart writes tunnelMode unquoted: {@code "Mode": separate,} (shared/upstream/README.md). */
    private static final Pattern UNQUOTED_MODE = Pattern.compile("(\"Mode\":\\s*)([A-Za-z0-9]+)(\\s*,)");
    private static final Set<String> BY_NAME = Set.of("containers", "initContainers", "env", "volumeMounts", "ports",
            "volumes", "imagePullSecrets");

    private final List<Difference> out = new ArrayList<>();

    private RenderDiff() {
    }

    static List<Difference> between(String oursYaml, String upstreamYaml) throws IOException {
        RenderDiff d = new RenderDiff();
        Map<String, JsonNode> ours = d.objects(oursYaml, "ours");
        Map<String, JsonNode> upstream = d.objects(upstreamYaml, "upstream");
        d.compare("", d.asObject(ours), d.asObject(upstream));
        return List.copyOf(d.out);
    }

    /** The rendered objects by {@code Kind/namespace/name} (cluster-scoped: {@code Kind/name}), normalized. */
    private Map<String, JsonNode> objects(String yaml, String side) throws IOException {
        Map<String, JsonNode> byId = new LinkedHashMap<>();
        try (var docs = YAML.readerFor(JsonNode.class).<JsonNode>readValues(yaml)) {
            while (docs.hasNext()) {
                JsonNode o = docs.next();
                if (o == null || o.isNull() || o.isMissingNode() || o.isEmpty()) {
                    continue; // an empty document (a template that rendered nothing)
                }
                String id = id(o);
                if (byId.put(id, normalize(id, (ObjectNode) o, side)) != null) {
                    throw new IOException(side + " renders " + id + " twice");
                }
            }
        }
        return byId;
    }

    static String id(JsonNode o) {
        String ns = o.path("metadata").path("namespace").asText("");
        return o.path("kind").asText() + "/" + (ns.isEmpty() ? "" : ns + "/") + o.path("metadata").path("name").asText();
    }

    private JsonNode normalize(String id, ObjectNode o, String side) {
        if (o.path("kind").asText().equals("ConfigMap") && o.path("data").isObject()) {
            ObjectNode data = (ObjectNode) o.get("data");
            for (String key : List.of("cni-conf.json", "net-conf.json")) {
                if (data.has(key)) {
                    data.set(key, json(id + ": data." + key, data.get(key).asText(), side));
                }
            }
        }
        return byName(o);
    }

    /** The text parsed as JSON; upstream's unquoted Mode is noted as a difference and read quoted. */
    private JsonNode json(String where, String text, String side) {
        try {
            return JSON.readTree(text);
        } catch (JsonProcessingException e) {
            Matcher m = UNQUOTED_MODE.matcher(text);
            String repaired = m.replaceAll("$1\"$2\"$3");
            String problem = "not JSON (" + e.getOriginalMessage() + ")";
            out.add(new Difference(where + " (as text)", side.equals("ours") ? problem : "JSON", side.equals("ours") ? "JSON" : problem));
            try {
                return JSON.readTree(repaired);
            } catch (JsonProcessingException again) {
                return JsonNodeFactory.instance.textNode(text); // compared as text: differs, and says so
            }
        }
    }

    /** Lists of named things become objects keyed by name (a container's command + args become exec). */
    private JsonNode byName(JsonNode n) {
        if (n.isObject()) {
            ObjectNode o = JsonNodeFactory.instance.objectNode();
            for (Map.Entry<String, JsonNode> e : n.properties()) {
                if (BY_NAME.contains(e.getKey()) && e.getValue().isArray()) {
                    ObjectNode named = JsonNodeFactory.instance.objectNode();
                    ArrayNode order = JsonNodeFactory.instance.arrayNode();
                    for (JsonNode item : e.getValue()) {
                        String name = item.path("name").asText();
                        named.set(name, container(e.getKey(), name, byName(item)));
                        order.add(name);
                    }
                    o.set(e.getKey(), named);
                    if (e.getKey().endsWith("ontainers")) {
                        o.set(e.getKey() + " (order)", order);
                    }
                } else {
                    o.set(e.getKey(), byName(e.getValue()));
                }
            }
            return o;
        }
        return n;
    }

    private static JsonNode container(String list, String name, JsonNode item) {
        if (!list.endsWith("ontainers") || !item.isObject()) {
            return item;
        }
        ObjectNode c = (ObjectNode) item;
        ArrayNode exec = JsonNodeFactory.instance.arrayNode();
        if (c.has("command")) {
            exec.addAll((ArrayNode) c.remove("command"));
        }
        if (c.has("args")) {
            exec.addAll((ArrayNode) c.remove("args"));
        }
        if (name.equals("kube-flannel") && !exec.isEmpty()) {
            c.set("program", exec.get(0));
            exec.remove(0);
            c.set("flags", exec);
        } else if (!exec.isEmpty()) {
            c.set("exec", exec);
        }
        return c;
    }

    private ObjectNode asObject(Map<String, JsonNode> objects) {
        ObjectNode o = JsonNodeFactory.instance.objectNode();
        objects.forEach(o::set);
        return o;
    }

    private void compare(String where, JsonNode ours, JsonNode upstream) {
        if (ours.equals(upstream)) {
            return;
        }
        if (where.endsWith("(order)")) {
            orderOfCommon(where, ours, upstream);
            return;
        }
        if (ours.isObject() && upstream.isObject()) {
            Set<String> keys = new TreeSet<>();
            ours.fieldNames().forEachRemaining(keys::add);
            upstream.fieldNames().forEachRemaining(keys::add);
            for (String k : keys) {
                String at = where.isEmpty() ? k : where + (where.contains(": ") ? "." : ": ") + k;
                JsonNode a = ours.get(k);
                JsonNode b = upstream.get(k);
                if (a == null || b == null) {
                    out.add(new Difference(at, text(a), text(b)));
                } else {
                    compare(at, a, b);
                }
            }
            return;
        }
        out.add(new Difference(where, text(ours), text(upstream)));
    }

    /** Containers both sides have must run in the same order; one side's extras are differences of their own. */
    private void orderOfCommon(String where, JsonNode ours, JsonNode upstream) {
        List<String> a = new ArrayList<>();
        List<String> b = new ArrayList<>();
        ours.forEach(n -> a.add(n.asText()));
        upstream.forEach(n -> b.add(n.asText()));
        List<String> commonA = a.stream().filter(b::contains).toList();
        List<String> commonB = b.stream().filter(a::contains).toList();
        if (!commonA.equals(commonB)) {
            out.add(new Difference(where, commonA.toString(), commonB.toString()));
        }
    }

    private static String text(JsonNode n) {
        return n == null ? null : n.toString();
    }
}
