package org.jflannel.subnet.kube;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeSpec;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.client.informers.cache.ItemStore;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Stream;

/**
 * The informer's cache. It holds one small {@link Entry} per Node (name, resourceVersion, pod CIDRs,
 * the annotations under our prefix) and hands the informer a Node built from it on each read.
 *
 * <p>Why not keep Nodes: fabric8's default store keeps every Node whole (status.images, conditions,
 * managedFields: tens of KB each); even a stripped Node is a Node + ObjectMeta + NodeSpec, each with
 * its own maps and lists (about 1 KB empty). The informer reads the store only to pair an update with
 * the previous object, for deletions of vanished objects and for the 5-minute resync, so building a
 * short-lived Node on those reads costs far less than keeping 2,000 of them.
 */
final class SlimNodeStore implements ItemStore<Node> {

    /** What we keep of a Node; {@code annotations} only those under our prefix. */
    record Entry(String name, String resourceVersion, String podCidr, List<String> podCidrs,
                 Map<String, String> annotations) {
        Entry {
            Objects.requireNonNull(name, "name");
            podCidrs = List.copyOf(podCidrs);
            annotations = Map.copyOf(annotations);
        }

        Node toNode() {
            ObjectMeta meta = new ObjectMeta();
            meta.setName(name);
            meta.setResourceVersion(resourceVersion);
            meta.setAnnotations(annotations.isEmpty() ? null : new HashMap<>(annotations));
            NodeSpec spec = new NodeSpec();
            spec.setPodCIDR(podCidr);
            spec.setPodCIDRs(new ArrayList<>(podCidrs));
            Node node = new Node();
            node.setMetadata(meta);
            node.setSpec(spec);
            return node;
        }
    }

    private final String prefix;
    private final ConcurrentHashMap<String, Entry> nodes = new ConcurrentHashMap<>();

    SlimNodeStore(KubeAnnotations keys) {
        this.prefix = keys.prefix();
    }

    @Override
    public String getKey(Node node) {
        return node.getMetadata().getName();
    }

    @Override
    public Node put(String key, Node node) {
        return toNode(nodes.put(key, entry(node)));
    }

    @Override
    public Node remove(String key) {
        return toNode(nodes.remove(key));
    }

    @Override
    public Stream<String> keySet() {
        return nodes.keySet().stream();
    }

    @Override
    public Stream<Node> values() {
        return nodes.values().stream().map(Entry::toNode);
    }

    @Override
    public int size() {
        return nodes.size();
    }

    @Override
    public Node get(String key) {
        return toNode(nodes.get(key));
    }

    /** The kept entry of node {@code key}, or null. */
    Entry entry(String key) {
        return nodes.get(key);
    }

    Entry entry(Node node) {
        Map<String, String> kept = new HashMap<>();
        Map<String, String> all = node.getMetadata().getAnnotations();
        if (all != null) {
            all.forEach((k, v) -> {
                if (k.startsWith(prefix) && v != null) {
                    kept.put(k, v);
                }
            });
        }
        NodeSpec spec = node.getSpec();
        String podCidr = spec == null ? null : spec.getPodCIDR();
        List<String> podCidrs = new ArrayList<>();
        if (spec != null && spec.getPodCIDRs() != null) {
            for (String c : spec.getPodCIDRs()) {
                if (c != null) {
                    podCidrs.add(c.equals(podCidr) ? podCidr : c); // one String for the usual podCIDRs == [podCIDR]
                }
            }
        }
        return new Entry(node.getMetadata().getName(), node.getMetadata().getResourceVersion(), podCidr, podCidrs, kept);
    }

    private static Node toNode(Entry e) {
        return e == null ? null : e.toNode();
    }
}
