package org.jflannel.subnet.kube;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The one shared informer on all Nodes (REFERENCE §4.7): list + watch with a 5-minute resync, its
 * cache a {@link SlimNodeStore}, its callbacks reduced to {@link NodeView}s for a {@link NodeListener}.
 * Callbacks run one at a time on the client's task executor (named {@code kube-client-N} when the
 * client comes from {@link KubeClients}). Explicit {@link #start} with a bounded sync wait, and
 * {@link #close}.
 */
final class NodeInformer implements AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(NodeInformer.class);
    /** Nodes per list page, so a large cluster is never one huge response in memory. */
    private static final long LIST_PAGE = 500;

    private final SharedIndexInformer<Node> informer;
    private final SlimNodeStore store;
    private final KubeAnnotations keys;

    NodeInformer(KubernetesClient client, KubeAnnotations keys, Duration resync, NodeListener listener) {
        this.keys = keys;
        this.store = new SlimNodeStore(keys);
        this.informer = client.nodes().withLimit(LIST_PAGE).runnableInformer(resync.toMillis());
        informer.itemStore(store);
        // as client-go: keep retrying list/watch (the sync timeout bounds start-up), log each failure
        informer.exceptionHandler((started, t) -> {
            LOG.warn("node informer list/watch failed started={} err={}", started, t.toString());
            return true;
        });
        informer.addEventHandler(new ResourceEventHandler<Node>() {
            @Override
            public void onAdd(Node node) {
                listener.added(NodeView.of(node, keys));
            }

            @Override
            public void onUpdate(Node before, Node after) {
                listener.updated(NodeView.of(before, keys), NodeView.of(after, keys));
            }

            @Override
            public void onDelete(Node last, boolean finalStateUnknown) {
                // a tombstone carries the last state the cache knew: still a removal
                listener.deleted(NodeView.of(last, keys));
            }
        });
    }

    /**
     * Starts list + watch and waits until the first list is in the cache, at most {@code syncTimeout}.
     * On timeout: fails, unless {@code continueWhenNotReady} (CONT_WHEN_CACHE_NOT_READY=true), when it
     * logs and returns with the informer still trying.
     */
    void start(Duration syncTimeout, boolean continueWhenNotReady) throws IOException, InterruptedException {
        try {
            informer.start().toCompletableFuture().get(syncTimeout.toMillis(), TimeUnit.MILLISECONDS);
            LOG.info("node informer synced nodes={}", store.size());
        } catch (TimeoutException e) {
            if (!continueWhenNotReady) {
                informer.stop();
                throw new IOException("timed out waiting for the node informer cache to sync after " + syncTimeout);
            }
            LOG.warn("node informer not synced after {}, continuing (CONT_WHEN_CACHE_NOT_READY=true)", syncTimeout);
        } catch (ExecutionException e) {
            informer.stop();
            throw new IOException("node informer failed to start: " + e.getCause().getMessage(), e.getCause());
        }
    }

    boolean synced() {
        return informer.hasSynced();
    }

    /** The cached view of node {@code name}, if the informer has it. */
    Optional<NodeView> get(String name) {
        Node n = store.get(name);
        return n == null ? Optional.empty() : Optional.of(NodeView.of(n, keys));
    }

    /** Every cached node, as views. */
    List<NodeView> views() {
        return store.values().map(n -> NodeView.of(n, keys)).toList();
    }

    /** The cached (stripped) Node itself: its annotations under our prefix and pod CIDRs. */
    Optional<Node> getSlim(String name) {
        return Optional.ofNullable(store.get(name));
    }

    @Override
    public void close() {
        informer.stop();
    }
}
