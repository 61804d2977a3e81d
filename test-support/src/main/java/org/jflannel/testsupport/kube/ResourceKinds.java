package org.jflannel.testsupport.kube;

import java.util.Map;

/** The group/version and kind of a collection's objects, from its path: for list kinds and bookmarks. */
final class ResourceKinds {

    /** {@code kind} is "Unknown" for a resource not in the table. */
    record Kind(String apiVersion, String kind) {
        boolean known() {
            return !kind.equals(UNKNOWN);
        }
    }

    private static final String UNKNOWN = "Unknown";
    private static final Map<String, String> KINDS = Map.ofEntries(
            Map.entry("nodes", "Node"), Map.entry("pods", "Pod"), Map.entry("namespaces", "Namespace"),
            Map.entry("configmaps", "ConfigMap"), Map.entry("secrets", "Secret"), Map.entry("services", "Service"),
            Map.entry("serviceaccounts", "ServiceAccount"), Map.entry("events", "Event"),
            Map.entry("endpoints", "Endpoints"), Map.entry("daemonsets", "DaemonSet"),
            Map.entry("deployments", "Deployment"), Map.entry("leases", "Lease"),
            Map.entry("networkpolicies", "NetworkPolicy"));

    private ResourceKinds() {
    }

    /** {@code /api/v1/nodes} → v1 Node; {@code /apis/apps/v1/namespaces/x/daemonsets} → apps/v1 DaemonSet. */
    static Kind of(String path) {
        String[] parts = path.replaceAll("[?].*$", "").replaceAll("^/+", "").split("/");
        boolean core = parts[0].equals("api");
        int at = core ? 2 : 3;
        String apiVersion = core ? (parts.length > 1 ? parts[1] : "v1") : (parts.length > 2 ? parts[1] + "/" + parts[2] : "");
        if (parts.length > at + 2 && parts[at].equals("namespaces")) {
            at += 2;
        }
        String plural = parts.length > at ? parts[at] : "";
        return new Kind(apiVersion, KINDS.getOrDefault(plural, UNKNOWN));
    }
}
