package org.jflannel.netpol.kube;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import io.fabric8.kubernetes.client.informers.cache.ItemStore;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;

/**
 * An informer cache that keeps each object cut down to what policy reads ({@code slim}): a Pod's
 * managedFields, status conditions, container images, env and volumes are tens of KB a pod that the
 * default store would keep for every pod of the cluster. The informer reads the store only to pair an
 * update with the object before it, for deletions and resyncs, so the cut object serves it as well.
 */
final class SlimStore<T extends HasMetadata> implements ItemStore<T> {
    private final ConcurrentHashMap<String, T> items = new ConcurrentHashMap<>();
    private final UnaryOperator<T> slim;

    SlimStore(UnaryOperator<T> slim) {
        this.slim = slim;
    }

    @Override
    public String getKey(T obj) {
        return Cache.metaNamespaceKeyFunc(obj);
    }

    @Override
    public T put(String key, T obj) {
        return items.put(key, slim.apply(obj));
    }

    @Override
    public T remove(String key) {
        return items.remove(key);
    }

    @Override
    public Stream<String> keySet() {
        return items.keySet().stream();
    }

    @Override
    public Stream<T> values() {
        return items.values().stream();
    }

    @Override
    public int size() {
        return items.size();
    }

    @Override
    public T get(String key) {
        return items.get(key);
    }
}
