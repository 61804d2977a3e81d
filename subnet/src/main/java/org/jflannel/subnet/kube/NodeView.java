package org.jflannel.subnet.kube;

import io.fabric8.kubernetes.api.model.Node;

import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What flannel needs of a Node: its name, pod CIDRs and the lease annotations. Kept instead of the
 * Node itself (a Node with its images, conditions and managed fields is tens of kilobytes).
 *
 * @param podCidr      {@code spec.podCIDR}, "" when unset
 * @param podCidrs     {@code spec.podCIDRs}, possibly empty
 * @param annotations  only the keys of {@link KubeAnnotations#leaseKeys()} that are present
 */
record NodeView(String name, String podCidr, List<String> podCidrs, Map<String, String> annotations) {

    NodeView {
        Objects.requireNonNull(name, "name");
        podCidr = podCidr == null ? "" : podCidr;
        podCidrs = podCidrs == null ? List.of() : List.copyOf(podCidrs);
        annotations = Map.copyOf(annotations);
    }

    static NodeView of(Node node, KubeAnnotations keys) {
        Map<String, String> all = node.getMetadata().getAnnotations();
        Map<String, String> kept = new HashMap<>();
        if (all != null) {
            for (String k : keys.leaseKeys()) {
                String v = all.get(k);
                if (v != null) {
                    kept.put(k, v);
                }
            }
        }
        var spec = node.getSpec();
        return new NodeView(node.getMetadata().getName(),
                spec == null ? "" : spec.getPodCIDR(),
                spec == null || spec.getPodCIDRs() == null ? List.of() : spec.getPodCIDRs().stream().filter(Objects::nonNull).toList(),
                kept);
    }

    /** The annotation value, "" when absent (as a Go map lookup). */
    String annotation(String key) {
        return annotations.getOrDefault(key, "");
    }
}
