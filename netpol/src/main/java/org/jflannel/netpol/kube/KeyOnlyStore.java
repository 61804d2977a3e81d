package org.jflannel.netpol.kube;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import io.fabric8.kubernetes.client.informers.cache.ItemStore;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiFunction;
import java.util.stream.Stream;

/**
 * An informer cache that keeps of each object only its key ({@code namespace/name}) and resourceVersion: the
 * records {@link org.jflannel.netpol.PolicySync} holds are the state; the informer needs the store only to tell an
 * add from an update, a changed object from one listed again unchanged (the resourceVersion), and which objects a
 * new listing no longer has (the keys: their deletions). A Pod kept whole, or even cut down to what policy reads,
 * costs ~4 KB of fabric8 model objects (each with its own maps and lists); this costs the two strings. What
 * {@link #get} and {@link #values} return is made anew from them by {@code bare} (name, namespace,
 * resourceVersion only), and {@link #isFullState()} says so: such an object must never be read as the pod
 * (the informer's periodic resync would replay them: the informers run without one).
 */
final class KeyOnlyStore<T extends HasMetadata> implements ItemStore<T> {
    private final ConcurrentHashMap<String, String> versions = new ConcurrentHashMap<>();
    private final BiFunction<String, String, T> bare;

    /** {@code bare}: the object for a key and a resourceVersion. */
    KeyOnlyStore(BiFunction<String, String, T> bare) {
        this.bare = bare;
    }

    @Override
    public String getKey(T obj) {
        return Cache.metaNamespaceKeyFunc(obj);
    }

    @Override
    public T put(String key, T obj) {
        String rv = obj.getMetadata().getResourceVersion();
        String was = versions.put(key, rv == null ? "" : rv);
        return was == null ? null : bare.apply(key, was);
    }

    @Override
    public T remove(String key) {
        String was = versions.remove(key);
        return was == null ? null : bare.apply(key, was);
    }

    @Override
    public Stream<String> keySet() {
        return versions.keySet().stream();
    }

    @Override
    public Stream<T> values() {
        return versions.entrySet().stream().map(e -> bare.apply(e.getKey(), e.getValue()));
    }

    @Override
    public int size() {
        return versions.size();
    }

    @Override
    public T get(String key) {
        String rv = versions.get(key);
        return rv == null ? null : bare.apply(key, rv);
    }

    @Override
    public boolean isFullState() {
        return false;
    }
}
