package org.jflannel.subnet.etcd;

import io.etcd.jetcd.KeyValue;
import io.etcd.jetcd.watch.WatchEvent;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.jflannel.core.ConfigException;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseEvent;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The leases a watch has delivered, by etcd key, and the turning of etcd data into event batches:
 * a listing becomes a snapshot or a diff, watch events become ADDED (put) and REMOVED (delete or
 * expiry). A malformed key or value is skipped with one log line naming the key and the field.
 * Used by the watch thread only.
 */
final class LeaseTable {
    private static final Logger LOG = LoggerFactory.getLogger(LeaseTable.class);

    private final Expirations expirations;
    private final Consumer<List<LeaseEvent>> sink;
    private Map<String, Lease> known = new HashMap<>();

    LeaseTable(Expirations expirations, Consumer<List<LeaseEvent>> sink) {
        this.expirations = expirations;
        this.sink = sink;
    }

    int size() {
        return known.size();
    }

    /** A full listing: delivered whole as a snapshot ({@code snapshot}), else as the diff to what we knew. */
    void replaceAll(List<EtcdStore.Entry> entries, boolean snapshot) throws InterruptedException {
        expirations.prefetch(entries.stream().map(EtcdStore.Entry::leaseId).toList());
        Map<String, Lease> now = new LinkedHashMap<>();
        for (EtcdStore.Entry e : entries) {
            Lease l = decode(e.key(), e.value(), expirations.of(e.leaseId()));
            if (l != null) {
                now.put(e.key(), l);
            }
        }
        List<LeaseEvent> batch = new ArrayList<>();
        for (Map.Entry<String, Lease> e : now.entrySet()) {
            Lease before = known.get(e.getKey());
            if (snapshot || before == null || !sameContent(before, e.getValue())) {
                batch.add(LeaseEvent.added(e.getValue()));
            }
        }
        if (!snapshot) {
            for (Map.Entry<String, Lease> e : known.entrySet()) {
                if (!now.containsKey(e.getKey())) {
                    batch.add(LeaseEvent.removed(e.getValue()));
                }
            }
        }
        known = new HashMap<>(now);
        if (snapshot || !batch.isEmpty()) {
            deliver(batch);
        }
    }

    /** Watch events in revision order, delivered as one batch. */
    void apply(List<WatchEvent> events) {
        if (events.isEmpty()) {
            return;
        }
        List<LeaseEvent> batch = new ArrayList<>(events.size());
        for (WatchEvent e : events) {
            KeyValue kv = e.getKeyValue();
            String key = EtcdStore.text(kv.getKey());
            if (e.getEventType() == WatchEvent.EventType.DELETE) {
                Lease gone = removed(key);
                if (gone != null) {
                    batch.add(LeaseEvent.removed(gone));
                }
            } else if (e.getEventType() == WatchEvent.EventType.PUT) {
                Lease l = decode(key, EtcdStore.text(kv.getValue()), expirations.ofFreshPut(kv.getLease()));
                if (l != null) {
                    known.put(key, l);
                    batch.add(LeaseEvent.added(l));
                } else if (known.containsKey(key)) {
                    // a lease overwritten with garbage is no longer usable: tell the backend it is gone
                    batch.add(LeaseEvent.removed(known.remove(key)));
                }
            }
        }
        if (!batch.isEmpty()) {
            deliver(batch);
        }
    }

    private Lease removed(String key) {
        Lease last = known.remove(key);
        try {
            return EtcdLeases.removed(key, last);
        } catch (ConfigException ex) {
            return null; // a key we never delivered and cannot name: nothing to remove
        }
    }

    private Lease decode(String key, String value, java.time.Instant expiration) {
        try {
            return EtcdLeases.decode(key, value, expiration);
        } catch (ConfigException ex) {
            LOG.warn("lease skipped key={} field={} reason={}", key, ex.field(), ex.getMessage());
            return null;
        }
    }

    /** Expirations are left out: they are read as "now + TTL" and would make every lease look changed. */
    private static boolean sameContent(Lease a, Lease b) {
        return a.sameSubnets(b) && a.attrs().equals(b.attrs());
    }

    private void deliver(List<LeaseEvent> batch) {
        try {
            sink.accept(List.copyOf(batch));
        } catch (RuntimeException e) {
            // one faulty consumer call must not end the stream of leases
            LOG.error("lease event sink failed events={}", batch.size(), e);
        }
    }
}
