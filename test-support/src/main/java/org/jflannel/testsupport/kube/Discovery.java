package org.jflannel.testsupport.kube;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

import java.util.List;
import java.util.Optional;

/**
 * The discovery documents a Go client reads before it touches a resource ({@code kubectl} maps
 * {@code nodes} to {@code /api/v1/nodes} through them): {@code /api}, {@code /api/v1}, {@code /apis},
 * {@code /version}. The stock CRUD mock answers these paths with an empty {@code List}, which
 * client-go cannot convert ({@code converting (v1.List) to (v1.APIVersions)}).
 */
final class Discovery {
    private static final ObjectMapper JSON = new ObjectMapper();

    /** name, namespaced, kind, short names: the core/v1 resources the mock stores. */
    private record Resource(String name, boolean namespaced, String kind, List<String> shortNames) {
    }

    private static final List<String> VERBS = List.of("create", "delete", "deletecollection", "get", "list", "patch",
            "update", "watch");
    private static final List<Resource> CORE = List.of(
            new Resource("nodes", false, "Node", List.of("no")),
            new Resource("nodes/status", false, "Node", List.of()),
            new Resource("namespaces", false, "Namespace", List.of("ns")),
            new Resource("pods", true, "Pod", List.of("po")),
            new Resource("configmaps", true, "ConfigMap", List.of("cm")),
            new Resource("secrets", true, "Secret", List.of()),
            new Resource("services", true, "Service", List.of("svc")),
            new Resource("serviceaccounts", true, "ServiceAccount", List.of("sa")),
            new Resource("events", true, "Event", List.of("ev")));

    private Discovery() {
    }

    /** The document for {@code path} (query ignored), or empty when it is not a discovery path. */
    static Optional<String> answer(String path, String serverAddress) {
        String p = path.replaceAll("[?].*$", "").replaceAll("/+$", "");
        return switch (p) {
            case "/api" -> Optional.of(apiVersions(serverAddress));
            case "/api/v1" -> Optional.of(coreResources());
            case "/apis" -> Optional.of("{\"kind\":\"APIGroupList\",\"apiVersion\":\"v1\",\"groups\":[]}");
            case "/version" -> Optional.of("{\"major\":\"1\",\"minor\":\"24\",\"gitVersion\":\"v1.24.0-jflannel-mock\","
                    + "\"gitCommit\":\"\",\"gitTreeState\":\"clean\",\"buildDate\":\"1970-01-01T00:00:00Z\","
                    + "\"goVersion\":\"\",\"compiler\":\"gc\",\"platform\":\"linux/amd64\"}");
            default -> Optional.empty();
        };
    }

    private static String apiVersions(String serverAddress) {
        ObjectNode o = JSON.createObjectNode();
        o.put("kind", "APIVersions");
        o.putArray("versions").add("v1");
        o.putArray("serverAddressByClientCIDRs").addObject().put("clientCIDR", "0.0.0.0/0")
                .put("serverAddress", serverAddress);
        return o.toString();
    }

    private static String coreResources() {
        ObjectNode o = JSON.createObjectNode();
        o.put("kind", "APIResourceList");
        o.put("apiVersion", "v1");
        o.put("groupVersion", "v1");
        ArrayNode list = o.putArray("resources");
        for (Resource r : CORE) {
            ObjectNode e = list.addObject();
            e.put("name", r.name());
            e.put("singularName", "");
            e.put("namespaced", r.namespaced());
            e.put("kind", r.kind());
            ArrayNode verbs = e.putArray("verbs");
            (r.name().contains("/") ? List.of("get", "patch", "update") : VERBS).forEach(verbs::add);
            if (!r.shortNames().isEmpty()) {
                ArrayNode sn = e.putArray("shortNames");
                r.shortNames().forEach(sn::add);
            }
        }
        return o.toString();
    }
}
