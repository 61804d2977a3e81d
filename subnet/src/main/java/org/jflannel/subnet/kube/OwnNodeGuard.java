package org.jflannel.subnet.kube;

import io.fabric8.kubernetes.api.model.Node;
import org.jflannel.core.LeaseAttrs;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;

/**
 * Keeps our node managed once the lease is acquired: when our Node shows up without the
 * {@code kube-subnet-manager} annotation (deleted and registered again by kubelet, or edited bare),
 * publishes our annotations again, and the
 * NetworkUnavailable=False condition with them, on its own thread ({@code kube-own-node}), never on
 * the informer's. Ours: upstream annotates only at start-up, so its peers ignore such a node until its
 * flanneld restarts.
 */
final class OwnNodeGuard implements NodeListener, AutoCloseable {

    private static final Logger LOG = LoggerFactory.getLogger(OwnNodeGuard.class);

    private final String nodeName;
    private final KubeAnnotations keys;
    private final boolean ipv4;
    private final OwnNodeClient client;
    private final Supplier<Optional<Node>> cached;
    private final KubeOptions options;
    private final Clock clock;
    private final AtomicBoolean pending = new AtomicBoolean();
    private final ExecutorService worker = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "kube-own-node");
        t.setDaemon(true);
        return t;
    });
    private volatile LeaseAttrs attrs;
    private volatile boolean networkAvailableSet;

    OwnNodeGuard(String nodeName, KubeAnnotations keys, boolean ipv4, OwnNodeClient client,
                 Supplier<Optional<Node>> cached, KubeOptions options, Clock clock) {
        this.nodeName = nodeName;
        this.keys = keys;
        this.ipv4 = ipv4;
        this.client = client;
        this.cached = cached;
        this.options = options;
        this.clock = clock;
    }

    /** From now on our node must carry the annotations of {@code published}. */
    void arm(LeaseAttrs published) {
        attrs = published;
    }

    /** NetworkUnavailable=False was set (completeLease): set it again on a node that comes back. */
    void networkAvailableSet() {
        networkAvailableSet = true;
    }

    @Override
    public void added(NodeView node) {
        if (node.name().equals(nodeName)) {
            check();
        }
    }

    @Override
    public void updated(NodeView before, NodeView after) {
        if (after.name().equals(nodeName) && !before.annotations().equals(after.annotations())) {
            check();
        }
    }

    @Override
    public void deleted(NodeView last) {
        if (last.name().equals(nodeName) && attrs != null) {
            LOG.warn("own node deleted node={}; its annotations are published again when it is back", nodeName);
        }
    }

    private void check() {
        if (attrs == null || !pending.compareAndSet(false, true)) {
            return;
        }
        worker.execute(() -> {
            pending.set(false);
            try {
                republish();
            } catch (IOException | RuntimeException e) {
                LOG.error("own node annotations not published again node={} err={}", nodeName, e.toString());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        });
    }

    private void republish() throws IOException, InterruptedException {
        Optional<Node> node = cached.get();
        if (node.isEmpty()) {
            return;
        }
        Map<String, String> current = node.get().getMetadata().getAnnotations() == null ? Map.of()
                : node.get().getMetadata().getAnnotations();
        if ("true".equals(current.get(keys.subnetKubeManaged()))) {
            return; // still managed: any other difference is acquireLease's business (or a user's overwrite)
        }
        Map<String, String> changes = OwnNodeAnnotations.changes(keys, attrs, ipv4, current);
        LOG.info("own node lacks its flannel annotations, publishing them again node={} keys={}", nodeName, changes.keySet());
        client.patchAnnotations(changes, options.pollInterval(), options.pollTimeout());
        if (networkAvailableSet) {
            client.setNetworkAvailable(clock.instant());
        }
    }

    @Override
    public void close() throws InterruptedException {
        worker.shutdownNow();
        worker.awaitTermination(5, TimeUnit.SECONDS);
    }
}
