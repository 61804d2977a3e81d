package org.jflannel.core;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Turns what a {@link SubnetManager} reports into the batches a {@link Network} applies (upstream
 * {@code subnet.LeaseWatcher}): the own lease is dropped, a snapshot is diffed against the current
 * view, and each batch holds at most one event per lease, the net effect of the input.
 *
 * <p>A lease is identified by its subnets ({@link Lease#key()}). ADDED is emitted for a lease that
 * is new or whose attributes changed; a lease re-reported with the same attributes (only its
 * expiration differs, say) yields nothing. REMOVED is emitted for a known lease that went away; a
 * removal of a lease we never saw is dropped. Where upstream's reset keeps a changed lease silent,
 * ours reports it as ADDED, so a peer that re-registered with a new VTEP MAC is re-programmed.
 *
 * <p>Pure and single-threaded: one instance per watch, used on the {@code lease-events} thread.
 */
public final class LeaseWatcher {
    private static final Logger LOG = LoggerFactory.getLogger(LeaseWatcher.class);

    private final Lease own;
    private final Map<String, Lease> leases = new LinkedHashMap<>();

    /** @param own this node's lease, whose events are never passed on (null: pass everything) */
    public LeaseWatcher(Lease own) {
        this.own = own;
    }

    /** Replaces the view with {@code snapshot}; returns REMOVED for leases gone, ADDED for new or changed ones. */
    public List<LeaseEvent> reset(List<Lease> snapshot) {
        Map<String, Lease> next = new LinkedHashMap<>();
        for (Lease lease : snapshot) {
            if (!isOwn(lease)) {
                next.put(lease.key(), lease); // a duplicate in the snapshot: the later one wins
            }
        }
        List<LeaseEvent> batch = new ArrayList<>();
        for (Lease old : leases.values()) {
            if (!next.containsKey(old.key())) {
                batch.add(LeaseEvent.removed(old));
            }
        }
        for (Lease lease : next.values()) {
            Lease old = leases.get(lease.key());
            if (old == null || !old.attrs().equals(lease.attrs())) {
                batch.add(LeaseEvent.added(lease));
            }
        }
        leases.clear();
        leases.putAll(next);
        return List.copyOf(batch);
    }

    /** Applies {@code events} to the view; returns the net change, one event per lease, in order of first mention. */
    public List<LeaseEvent> update(List<LeaseEvent> events) {
        Map<String, Lease> before = new LinkedHashMap<>();
        for (LeaseEvent e : events) {
            Lease lease = e.lease();
            if (isOwn(lease)) {
                continue;
            }
            String key = lease.key();
            if (!before.containsKey(key)) {
                before.put(key, leases.get(key)); // may be null: not known before this batch
            }
            if (e.type() == LeaseEvent.Type.ADDED) {
                leases.put(key, lease);
            } else if (leases.remove(key) == null) {
                LOG.debug("lease removal of an unknown lease dropped subnet={}", key);
            }
        }
        List<LeaseEvent> batch = new ArrayList<>();
        for (Map.Entry<String, Lease> entry : before.entrySet()) {
            Lease was = entry.getValue();
            Lease now = leases.get(entry.getKey());
            if (now == null && was != null) {
                batch.add(LeaseEvent.removed(was));
            } else if (now != null && (was == null || !was.attrs().equals(now.attrs()))) {
                batch.add(LeaseEvent.added(now));
            }
        }
        return List.copyOf(batch);
    }

    /** The other nodes' leases as currently known: in the last snapshot's order, then in order of arrival. */
    public List<Lease> leases() {
        return List.copyOf(leases.values());
    }

    /** Upstream's rule: every subnet the lease has equals the own lease's subnet of that family. */
    private boolean isOwn(Lease lease) {
        if (own == null) {
            return false;
        }
        boolean v4 = lease.subnet() == null || Objects.equals(lease.subnet(), own.subnet());
        boolean v6 = lease.ipv6Subnet() == null || Objects.equals(lease.ipv6Subnet(), own.ipv6Subnet());
        return v4 && v6;
    }
}
