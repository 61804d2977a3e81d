package org.jflannel.subnet.etcd;

import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import org.jflannel.core.LeaseEvent;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches the own lease key (REFERENCE §5.6). Deleted or expired: stops the renewal (which would put
 * it back) and calls the daemon's callback once, so that it can log
 * {@code Lease has been revoked. Shutting down daemon.} and exit. Re-put: the renewal follows the new
 * expiration, as upstream's timer reset; re-put without TTL (an operator turned it into a
 * reservation): the renewal stops, so that we never give it a TTL again.
 */
final class OwnLeaseGuard implements Consumer<List<LeaseEvent>> {
    private static final Logger LOG = LoggerFactory.getLogger(OwnLeaseGuard.class);

    private final String key;
    private final LeaseRenewer renewer;
    private final Runnable onLost;
    private final AtomicBoolean snapshotSeen = new AtomicBoolean();
    private final AtomicBoolean fired = new AtomicBoolean();

    OwnLeaseGuard(String key, LeaseRenewer renewer, Runnable onLost) {
        this.key = key;
        this.renewer = renewer;
        this.onLost = onLost;
    }

    @Override
    public void accept(List<LeaseEvent> batch) {
        boolean snapshot = snapshotSeen.compareAndSet(false, true);
        if (snapshot && batch.isEmpty()) {
            lost();
            return;
        }
        for (LeaseEvent e : batch) {
            if (e.type() == LeaseEvent.Type.REMOVED) {
                lost();
                return;
            }
            if (e.lease().expiration() == null) {
                LOG.info("own lease has no TTL (a reservation), renewal stopped key={}", key);
                renewer.cancel();
            } else {
                renewer.reschedule(e.lease().expiration());
            }
        }
    }

    private void lost() {
        if (fired.compareAndSet(false, true)) {
            LOG.warn("own lease deleted or expired key={}", key);
            renewer.cancel();
            onLost.run();
        }
    }
}
