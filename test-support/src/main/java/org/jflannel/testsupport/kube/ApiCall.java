package org.jflannel.testsupport.kube;

import java.util.Objects;

/**
 * One request the mock API server received, in the terms RBAC speaks: verb ({@code get}, {@code list},
 * {@code watch}, {@code create}, {@code update}, {@code patch}, {@code delete}), API group ("" for core),
 * resource, subresource ("" when none); plus the raw path and content type for assertions.
 */
public record ApiCall(String verb, String group, String resource, String subresource, String name,
                      String path, String contentType, String body, String userAgent) {

    public ApiCall {
        Objects.requireNonNull(verb, "verb");
        Objects.requireNonNull(group, "group");
        Objects.requireNonNull(resource, "resource");
        Objects.requireNonNull(subresource, "subresource");
        Objects.requireNonNull(name, "name");
        Objects.requireNonNull(path, "path");
        contentType = contentType == null ? "" : contentType;
        body = body == null ? "" : body;
        userAgent = userAgent == null ? "" : userAgent;
    }

    /** {@code nodes/status}, {@code pods}: the resource as a ClusterRole rule names it. */
    public String rbacResource() {
        return subresource.isEmpty() ? resource : resource + "/" + subresource;
    }

    /**
     * Classifies a request line. Paths: {@code /api/v1/[namespaces/<ns>/]<resource>[/<name>[/<sub>]]}
     * and {@code /apis/<group>/<version>/...}. Anything else (discovery, {@code /version}) is a
     * non-resource request with resource "".
     */
    public static ApiCall of(String method, String fullPath, String contentType, String body) {
        return of(method, fullPath, contentType, body, "");
    }

    /** As {@link #of(String, String, String, String)}, keeping the client's User-Agent. */
    public static ApiCall of(String method, String fullPath, String contentType, String body, String userAgent) {
        String path = fullPath;
        String query = "";
        int q = fullPath.indexOf('?');
        if (q >= 0) {
            path = fullPath.substring(0, q);
            query = fullPath.substring(q + 1);
        }
        String[] parts = path.replaceAll("^/+", "").split("/");
        String group;
        int at;
        if (parts.length >= 2 && parts[0].equals("api")) {
            group = "";
            at = 2;
        } else if (parts.length >= 3 && parts[0].equals("apis")) {
            group = parts[1];
            at = 3;
        } else {
            return new ApiCall(method.toLowerCase(java.util.Locale.ROOT), "", "", "", "", fullPath, contentType, body, userAgent);
        }
        if (parts.length > at + 2 && parts[at].equals("namespaces")) {
            at += 2;
        }
        String resource = parts.length > at ? parts[at] : "";
        String name = parts.length > at + 1 ? parts[at + 1] : "";
        String sub = parts.length > at + 2 ? parts[at + 2] : "";
        boolean watch = query.contains("watch=true") || query.contains("watch=1");
        String verb = switch (method.toUpperCase(java.util.Locale.ROOT)) {
            case "GET" -> watch ? "watch" : name.isEmpty() ? "list" : "get";
            case "POST" -> "create";
            case "PUT" -> "update";
            case "PATCH" -> "patch";
            case "DELETE" -> name.isEmpty() ? "deletecollection" : "delete";
            default -> method.toLowerCase(java.util.Locale.ROOT);
        };
        return new ApiCall(verb, group, resource, sub, name, fullPath, contentType, body, userAgent);
    }
}
