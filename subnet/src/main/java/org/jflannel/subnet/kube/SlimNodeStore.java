package org.jflannel.subnet.kube;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.informers.cache.ItemStore;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;

/**
 * The informer's cache, holding a stripped copy of each Node: name, resourceVersion, uid, the
 * annotations under our prefix and the pod CIDRs. fabric8's default store keeps every Node whole
 * (status.images, conditions, managedFields: tens of KB each), which is what makes a bare informer
 * on a large cluster cost ~50 KB per node.
 */
final class SlimNodeStore implements ItemStore<Node> {

    private final String prefix;
    private final ConcurrentHashMap<String, Node> nodes = new ConcurrentHashMap<>();

    SlimNodeStore(KubeAnnotations keys) {
        this.prefix = keys.prefix();
    }

    @Override
    public String getKey(Node node) {
        return node.getMetadata().getName();
    }

    @Override
    public Node put(String key, Node node) {
        return nodes.put(key, slim(node));
    }

    @Override
    public Node remove(String key) {
        return nodes.remove(key);
    }

    @Override
    public Stream<String> keySet() {
        return nodes.keySet().stream();
    }

    @Override
    public Stream<Node> values() {
        return nodes.values().stream();
    }

    @Override
    public int size() {
        return nodes.size();
    }

    @Override
    public Node get(String key) {
        return nodes.get(key);
    }

    Node slim(Node node) {
        Map<String, String> kept = new TreeMap<>();
        Map<String, String> all = node.getMetadata().getAnnotations();
        if (all != null) {
            all.forEach((k, v) -> {
                if (k.startsWith(prefix)) {
                    kept.put(k, v);
                }
            });
        }
        var spec = node.getSpec();
        return new NodeBuilder()
                .withNewMetadata()
                .withName(node.getMetadata().getName())
                .withUid(node.getMetadata().getUid())
                .withResourceVersion(node.getMetadata().getResourceVersion())
                .withAnnotations(kept.isEmpty() ? null : kept)
                .endMetadata()
                .withNewSpec()
                .withPodCIDR(spec == null ? null : spec.getPodCIDR())
                .withPodCIDRs(spec == null ? null : spec.getPodCIDRs())
                .endSpec()
                .build();
    }
}
