package org.jflannel.netpol;

import java.util.List;
import java.util.Map;

/** A snapshot of what policy depends on: pods, namespaces' labels by name, policies. */
public record ClusterState(List<PodInfo> pods, Map<String, Map<String, String>> namespaceLabels, List<Policy> policies) {
    public ClusterState {
        pods = List.copyOf(pods);
        namespaceLabels = Map.copyOf(namespaceLabels);
        policies = List.copyOf(policies);
    }

    /** A namespace's labels ({@code kubernetes.io/metadata.name} is set by the API server on every namespace). */
    public Map<String, String> labelsOf(String namespace) {
        Map<String, String> l = namespaceLabels.get(namespace);
        return l != null ? l : Map.of("kubernetes.io/metadata.name", namespace);
    }

    /** The policies selecting {@code p} that isolate it in {@code direction}. */
    public List<Policy> isolating(PodInfo p, Direction direction) {
        if (!p.subject()) {
            return List.of();
        }
        return policies.stream().filter(x -> direction == Direction.INGRESS ? x.ingress() : x.egress())
                .filter(x -> x.selects(p)).toList();
    }
}
