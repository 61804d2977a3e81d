package org.jflannel.netpol.kube;

import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicyBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.jflannel.netpol.PolicySync;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The API side of NetworkPolicy: list + watch of every Pod, Namespace and NetworkPolicy (informers, as
 * the node informer: retrying for ever; no resync; their caches holding keys and resourceVersions only,
 * {@link KeyOnlyStore}: the records in {@link PolicySync} are the state), each event
 * read into records and handed to {@link PolicySync}, which is told {@link PolicySync#ready()} once all
 * three have their first listing. A malformed policy is handed over as rejected, naming the field; a
 * malformed pod or namespace never stops the informers.
 */
public final class PolicyInformers implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(PolicyInformers.class);
    private static final long LIST_PAGE = 500;

    private final List<SharedIndexInformer<?>> informers = new ArrayList<>();

    private PolicyInformers() {
    }

    /** Starts the three informers on {@code client}; returns once they are started (not yet synced: sync comes in the background). */
    public static PolicyInformers start(KubernetesClient client, PolicySync sync) {
        PolicyInformers p = new PolicyInformers();
        // ready once each informer's handler has been handed its whole first listing (onList comes after the listing's
        // adds, on the handler's own thread): the start futures complete when the cache has it, possibly before the
        // handler has seen all of it, and a table made from part of a listing could open an isolated pod
        java.util.concurrent.atomic.AtomicInteger unlisted = new java.util.concurrent.atomic.AtomicInteger(3);
        Runnable listed = () -> {
            if (unlisted.decrementAndGet() == 0) {
                sync.ready();
            }
        };
        // no resync: it would replay the stores' bare objects (KeyOnlyStore), and the sync keeps the state itself
        SharedIndexInformer<Pod> pods = client.pods().inAnyNamespace().withLimit(LIST_PAGE).runnableInformer(0);
        pods.itemStore(new KeyOnlyStore<>(PolicyInformers::barePod));
        pods.addEventHandler(handler(pod -> sync.pod(Cache.metaNamespaceKeyFunc(pod), read(pod)),
                pod -> sync.pod(Cache.metaNamespaceKeyFunc(pod), null), listed));
        SharedIndexInformer<Namespace> namespaces = client.namespaces().withLimit(LIST_PAGE).runnableInformer(0);
        namespaces.itemStore(new KeyOnlyStore<>((key, rv) -> new NamespaceBuilder().withNewMetadata().withName(key)
                .withResourceVersion(rv).endMetadata().build()));
        namespaces.addEventHandler(handler(ns -> sync.namespace(ns.getMetadata().getName(), labels(ns)),
                ns -> sync.namespace(ns.getMetadata().getName(), null), listed));
        SharedIndexInformer<NetworkPolicy> policies = client.network().v1().networkPolicies().inAnyNamespace().withLimit(LIST_PAGE)
                .runnableInformer(0);
        policies.itemStore(new KeyOnlyStore<>((key, rv) -> {
            int slash = key.indexOf('/');
            return new NetworkPolicyBuilder().withNewMetadata().withNamespace(key.substring(0, Math.max(0, slash)))
                    .withName(key.substring(slash + 1)).withResourceVersion(rv).endMetadata().build();
        }));
        policies.addEventHandler(handler(np -> policy(sync, np), np -> sync.policy(Cache.metaNamespaceKeyFunc(np), null, null), listed));
        for (SharedIndexInformer<?> i : List.of(pods, namespaces, policies)) {
            i.exceptionHandler((isStarted, t) -> {
                LOG.warn("network policy informer list/watch failed type={} started={} err={}", i.getApiTypeClass().getSimpleName(),
                        isStarted, t.toString());
                return true;
            });
            p.informers.add(i);
            i.start();
        }
        return p;
    }

    private static void policy(PolicySync sync, NetworkPolicy np) {
        String id = Cache.metaNamespaceKeyFunc(np);
        try {
            sync.policy(id, ApiObjects.policy(np), null);
        } catch (IllegalArgumentException e) {
            sync.policy(id, null, e.getMessage());
        }
    }

    private static org.jflannel.netpol.PodInfo read(Pod pod) {
        try {
            return ApiObjects.pod(pod);
        } catch (RuntimeException e) {
            LOG.warn("pod not readable for network policy pod={} err=\"{}\"", Cache.metaNamespaceKeyFunc(pod), e.getMessage());
            return null;
        }
    }

    private static java.util.Map<String, String> labels(Namespace ns) {
        java.util.Map<String, String> l = ns.getMetadata().getLabels();
        return l == null ? java.util.Map.of() : l;
    }

    /** {@code listed}: run once, after the first listing's objects have all been handed over. */
    private static <T> ResourceEventHandler<T> handler(Consumer<T> upsert, Consumer<T> delete, Runnable listed) {
        java.util.concurrent.atomic.AtomicBoolean first = new java.util.concurrent.atomic.AtomicBoolean(true);
        return new ResourceEventHandler<>() {
            @Override
            public void onList(String resourceVersion, boolean complete) {
                if (first.compareAndSet(true, false)) {
                    listed.run();
                }
            }

            @Override
            public void onAdd(T obj) {
                upsert.accept(obj);
            }

            @Override
            public void onUpdate(T before, T after) {
                if (before != after) { // the same object twice is a resync's replay of the store: nothing new
                    upsert.accept(after);
                }
            }

            @Override
            public void onDelete(T obj, boolean finalStateUnknown) {
                delete.accept(obj);
            }
        };
    }

    /** The Pod the store gives for a key and resourceVersion: only those (an informer's bookkeeping, never the pod). */
    static Pod barePod(String key, String resourceVersion) {
        int slash = key.indexOf('/');
        return new PodBuilder().withNewMetadata().withNamespace(slash < 0 ? null : key.substring(0, slash))
                .withName(key.substring(slash + 1)).withResourceVersion(resourceVersion).endMetadata().build();
    }

    @Override
    public void close() {
        informers.forEach(SharedIndexInformer::stop);
    }
}
