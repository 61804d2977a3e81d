package org.jflannel.subnet.kube;

import org.jflannel.core.ConfigException;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseEvent;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * Turns node callbacks into lease events (REFERENCE §4.7): only managed nodes count, our own node is
 * left out, an update counts when {@link NodeLeases#changed} says so, a node that cannot become a
 * lease is skipped with one log line. Keeps the current lease of every peer (not the Node) so that a
 * new subscriber gets a snapshot first, then every later change, in order and without a gap.
 */
final class LeaseTracker implements NodeListener {

    private static final Logger LOG = LoggerFactory.getLogger(LeaseTracker.class);

    private final String ownNode;
    private final NodeLeases leases;
    private final Object lock = new Object();
    private final Map<String, Lease> current = new HashMap<>();
    private LeaseEventQueue queue;

    LeaseTracker(String ownNode, NodeLeases leases) {
        this.ownNode = ownNode;
        this.leases = leases;
    }

    /**
     * Starts delivering to {@code sink}: first a snapshot of the peers in {@code cache} (the informer's
     * store, which is ahead of its callbacks: changes still queued for a callback arrive again after
     * the snapshot, which is harmless since ADDED/REMOVED are idempotent), then every later change.
     */
    LeaseEventQueue subscribe(int depth, Consumer<List<LeaseEvent>> sink, Supplier<List<NodeView>> cache) {
        LeaseEventQueue q = new LeaseEventQueue(depth, sink);
        synchronized (lock) {
            if (queue != null) {
                throw new IllegalStateException("lease events already have a subscriber");
            }
            List<LeaseEvent> snapshot = new ArrayList<>();
            for (NodeView n : cache.get()) {
                if (!n.name().equals(ownNode) && leases.managed(n)) {
                    try {
                        Lease l = leases.toLease(n);
                        current.put(n.name(), l);
                        snapshot.add(LeaseEvent.added(l));
                    } catch (ConfigException e) {
                        LOG.debug("snapshot skips node={} err={}", n.name(), e.getMessage()); // its callback logs it
                    }
                }
            }
            try {
                q.put(snapshot); // an empty queue: never waits
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException("interrupted while subscribing", e);
            }
            queue = q;
            LOG.info("lease watch started snapshot={}", snapshot.size());
        }
        q.start();
        return q;
    }

    void unsubscribe(LeaseEventQueue q) {
        synchronized (lock) {
            if (queue == q) {
                queue = null;
            }
        }
        q.close();
    }

    /** Ends the current subscription, if any. */
    void close() {
        LeaseEventQueue q;
        synchronized (lock) {
            q = queue;
            queue = null;
        }
        if (q != null) {
            q.close();
        }
    }

    @Override
    public void added(NodeView node) {
        if (!node.name().equals(ownNode) && leases.managed(node)) {
            toLease(node, "added");
        }
    }

    @Override
    public void updated(NodeView before, NodeView after) {
        if (!after.name().equals(ownNode) && leases.managed(after) && leases.changed(before, after)) {
            toLease(after, "updated");
        }
    }

    @Override
    public void deleted(NodeView last) {
        if (last.name().equals(ownNode)) {
            return;
        }
        Lease known;
        synchronized (lock) {
            known = current.remove(last.name());
        }
        if (known == null && leases.managed(last)) {
            try {
                known = leases.toLease(last);
            } catch (ConfigException e) {
                skip(last, e);
            }
        }
        if (known != null) {
            LOG.info("node deleted node={} subnet={}", last.name(), known.key());
            emit(last.name(), LeaseEvent.removed(known));
        }
    }

    private void toLease(NodeView node, String what) {
        try {
            Lease lease = leases.toLease(node);
            if (subscribed()) {
                LOG.info("node {} node={} subnet={} publicIp={}", what, node.name(), lease.key(), lease.attrs().publicIp());
            } else if (LOG.isDebugEnabled()) {
                // the informer's initial list, before anyone listens: the snapshot's summary line says it
                // (one INFO line per node was 2,000 lines and ~40 ms at start in a 2,000-node cluster)
                LOG.debug("node {} node={} subnet={} publicIp={}", what, node.name(), lease.key(), lease.attrs().publicIp());
            }
            emit(node.name(), LeaseEvent.added(lease));
        } catch (ConfigException e) {
            skip(node, e);
        }
    }

    private boolean subscribed() {
        synchronized (lock) {
            return queue != null;
        }
    }

    private static void skip(NodeView node, ConfigException e) {
        LOG.warn("Error turning node \"{}\" to lease: {} field={}", node.name(), e.getMessage(), e.field());
    }

    private void emit(String node, LeaseEvent event) {
        LeaseEventQueue q;
        synchronized (lock) {
            if (event.type() == LeaseEvent.Type.ADDED) {
                current.put(node, event.lease());
            }
            q = queue;
        }
        if (q == null) {
            return;
        }
        try {
            q.put(List.of(event));
        } catch (InterruptedException e) {
            // the informer is stopping; keep the interrupt for its thread
            Thread.currentThread().interrupt();
        }
    }
}
