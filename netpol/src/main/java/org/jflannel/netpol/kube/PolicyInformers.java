package org.jflannel.netpol.kube;

import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.ContainerBuilder;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.fabric8.kubernetes.client.informers.cache.Cache;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import org.jflannel.netpol.PolicySync;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The API side of NetworkPolicy: list + watch of every Pod, Namespace and NetworkPolicy (informers, as
 * the node informer: retrying for ever, a 5-minute resync, caches cut to what policy reads), each event
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
    public static PolicyInformers start(KubernetesClient client, PolicySync sync, Duration resync) {
        PolicyInformers p = new PolicyInformers();
        SharedIndexInformer<Pod> pods = client.pods().inAnyNamespace().withLimit(LIST_PAGE).runnableInformer(resync.toMillis());
        pods.itemStore(new SlimStore<>(PolicyInformers::slimPod));
        pods.addEventHandler(handler(pod -> sync.pod(Cache.metaNamespaceKeyFunc(pod), read(pod)),
                pod -> sync.pod(Cache.metaNamespaceKeyFunc(pod), null)));
        SharedIndexInformer<Namespace> namespaces = client.namespaces().withLimit(LIST_PAGE).runnableInformer(resync.toMillis());
        namespaces.itemStore(new SlimStore<>(PolicyInformers::slimNamespace));
        namespaces.addEventHandler(handler(ns -> sync.namespace(ns.getMetadata().getName(), labels(ns)),
                ns -> sync.namespace(ns.getMetadata().getName(), null)));
        SharedIndexInformer<NetworkPolicy> policies = client.network().v1().networkPolicies().inAnyNamespace().withLimit(LIST_PAGE)
                .runnableInformer(resync.toMillis());
        policies.addEventHandler(handler(np -> policy(sync, np), np -> sync.policy(Cache.metaNamespaceKeyFunc(np), null, null)));
        List<CompletableFuture<?>> started = new ArrayList<>();
        for (SharedIndexInformer<?> i : List.of(pods, namespaces, policies)) {
            i.exceptionHandler((isStarted, t) -> {
                LOG.warn("network policy informer list/watch failed type={} started={} err={}", i.getApiTypeClass().getSimpleName(),
                        isStarted, t.toString());
                return true;
            });
            p.informers.add(i);
            started.add(i.start().toCompletableFuture());
        }
        CompletableFuture.allOf(started.toArray(CompletableFuture[]::new)).thenRun(sync::ready);
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

    private static <T> ResourceEventHandler<T> handler(Consumer<T> upsert, Consumer<T> delete) {
        return new ResourceEventHandler<>() {
            @Override
            public void onAdd(T obj) {
                upsert.accept(obj);
            }

            @Override
            public void onUpdate(T before, T after) {
                upsert.accept(after);
            }

            @Override
            public void onDelete(T obj, boolean finalStateUnknown) {
                delete.accept(obj);
            }
        };
    }

    /** A Pod with only what {@link ApiObjects#pod} reads (and what the informer needs: name, namespace, resourceVersion). */
    static Pod slimPod(Pod p) {
        List<Container> containers = new ArrayList<>();
        if (p.getSpec() != null && p.getSpec().getContainers() != null) {
            for (Container c : p.getSpec().getContainers()) {
                if (c.getPorts() != null && !c.getPorts().isEmpty()) {
                    containers.add(new ContainerBuilder().withName(c.getName()).withPorts(c.getPorts()).build());
                }
            }
        }
        var meta = p.getMetadata();
        var status = p.getStatus();
        return new PodBuilder().withNewMetadata().withName(meta.getName()).withNamespace(meta.getNamespace())
                .withResourceVersion(meta.getResourceVersion()).withUid(meta.getUid()).withLabels(meta.getLabels()).endMetadata()
                .withNewSpec().withNodeName(p.getSpec() == null ? null : p.getSpec().getNodeName())
                .withHostNetwork(p.getSpec() == null ? null : p.getSpec().getHostNetwork()).withContainers(containers).endSpec()
                .withNewStatus().withPhase(status == null ? null : status.getPhase()).withPodIP(status == null ? null : status.getPodIP())
                .withPodIPs(status == null ? null : status.getPodIPs()).endStatus().build();
    }

    static Namespace slimNamespace(Namespace n) {
        var meta = n.getMetadata();
        return new NamespaceBuilder().withNewMetadata().withName(meta.getName()).withResourceVersion(meta.getResourceVersion())
                .withUid(meta.getUid()).withLabels(meta.getLabels()).endMetadata().build();
    }

    @Override
    public void close() {
        informers.forEach(SharedIndexInformer::stop);
    }
}
