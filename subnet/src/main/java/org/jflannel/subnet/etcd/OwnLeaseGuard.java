package org.jflannel.subnet.etcd;

import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.jflannel.core.LeaseEvent;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches the own lease key (REFERENCE §5.6): if it is deleted or expires, stops the renewal (which
 * would put it back) and calls the daemon's callback once, so that it can log
 * {@code Lease has been revoked. Shutting down daemon.} and exit.
 */
final class OwnLeaseGuard implements Consumer<List<LeaseEvent>> {
    private static final Logger LOG = LoggerFactory.getLogger(OwnLeaseGuard.class);

    private final String key;
    private final Runnable stopRenewal;
    private final Runnable onLost;
    private final AtomicBoolean snapshotSeen = new AtomicBoolean();
    private final AtomicBoolean fired = new AtomicBoolean();

    OwnLeaseGuard(String key, Runnable stopRenewal, Runnable onLost) {
        this.key = key;
        this.stopRenewal = stopRenewal;
        this.onLost = onLost;
    }

    @Override
    public void accept(List<LeaseEvent> batch) {
        boolean snapshot = snapshotSeen.compareAndSet(false, true);
        boolean gone = snapshot ? batch.isEmpty() : batch.stream().anyMatch(e -> e.type() == LeaseEvent.Type.REMOVED);
        if (gone && fired.compareAndSet(false, true)) {
            LOG.warn("own lease deleted or expired key={}", key);
            stopRenewal.run();
            onLost.run();
        }
    }
}
