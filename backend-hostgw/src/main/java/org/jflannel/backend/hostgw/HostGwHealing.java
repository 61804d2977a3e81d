package org.jflannel.backend.hostgw;

import java.util.EnumSet;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.netlink.NetlinkEvent;
import org.jflannel.linuxnet.netlink.NetlinkMonitor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ours (REFERENCE §6.10): watches route, link and address events of the external interface on the
 * {@code hostgw-watch} thread and schedules work on the {@code hostgw-timer} thread; both only hand
 * tasks to the lease-events executor, where the network does the work. A deleted route, or the
 * interface changing state or addresses, triggers a debounced reconcile; every interval a full one
 * (upstream re-adds missing routes every 10 s too).
 */
final class HostGwHealing implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(HostGwHealing.class);

    private final HostGwNetwork network;
    private final Executor leaseEvents;
    private final HostGwSettings settings;
    private final ScheduledExecutorService timer;
    private final AtomicBoolean reconcilePending = new AtomicBoolean();
    /** Set by link and address events: the next reconcile retries failed routes and refused peers too. */
    private final AtomicBoolean full = new AtomicBoolean();
    private final String extName;
    private volatile int link;
    private NetlinkMonitor monitor;

    private HostGwHealing(HostGwNetwork network, Executor leaseEvents, HostGwSettings settings, String extName) {
        this.network = network;
        this.leaseEvents = leaseEvents;
        this.settings = settings;
        this.extName = extName;
        this.link = network.link();
        ScheduledThreadPoolExecutor t = new ScheduledThreadPoolExecutor(1, r -> {
            Thread th = new Thread(r, "hostgw-timer");
            th.setDaemon(true);
            return th;
        });
        t.setRemoveOnCancelPolicy(true);
        this.timer = t;
    }

    /** Starts watching; the netlink socket joins the calling thread's network namespace. */
    static HostGwHealing start(HostGwNetwork network, Executor leaseEvents, HostGwSettings settings, String extName)
            throws NetlinkException {
        HostGwHealing h = new HostGwHealing(network, leaseEvents, settings, extName);
        h.monitor = NetlinkMonitor.start("hostgw-watch", EnumSet.of(NetlinkMonitor.Group.LINK,
                NetlinkMonitor.Group.ADDRESS, NetlinkMonitor.Group.IPV4_ROUTE, NetlinkMonitor.Group.IPV6_ROUTE), h::onEvent);
        long every = settings.reconcileInterval().toMillis();
        if (every > 0) {
            h.timer.scheduleWithFixedDelay(() -> h.hand(() -> network.reconcile(true)), every, every, TimeUnit.MILLISECONDS);
        }
        return h;
    }

    /** The interface was re-created with a new index. */
    void watch(int index) {
        link = index;
    }

    /** Runs on hostgw-watch: decide cheaply whether the event concerns us, never touch the kernel here. */
    private void onEvent(NetlinkEvent event) {
        if (event instanceof NetlinkEvent.LinkEvent le) {
            if (le.link().index() == link || le.link().name().equals(extName)) {
                requestReconcile(true); // down, up, deleted or re-created: routes via a gateway go and come with it
            }
        } else if (event instanceof NetlinkEvent.AddressEvent a) {
            if (a.address().linkIndex() == link) {
                requestReconcile(true); // the segment changed: refused peers may be reachable now
            }
        } else if (event instanceof NetlinkEvent.RouteEvent r) {
            if (r.deleted() && r.route().linkIndex() == link) {
                requestReconcile(false);
            }
        }
    }

    /**
     * Debounced: many deletions (an interface going down takes all its routes) make one reconcile.
     * A route deletion alone does not retry failed routes (our own deletions are events too); a link
     * or address change does, since it can make a failed route possible.
     */
    private void requestReconcile(boolean retryFailing) {
        if (retryFailing) {
            full.set(true);
        }
        if (reconcilePending.compareAndSet(false, true)) {
            try {
                timer.schedule(() -> {
                    reconcilePending.set(false);
                    boolean all = full.getAndSet(false);
                    hand(() -> network.reconcile(all));
                }, settings.debounce().toMillis(), TimeUnit.MILLISECONDS);
            } catch (RejectedExecutionException e) {
                LOG.debug("hostgw-timer stopped, reconcile dropped");
            }
        }
    }

    private void hand(Runnable task) {
        if (network.closed()) {
            return;
        }
        try {
            leaseEvents.execute(() -> {
                if (!network.closed()) {
                    task.run();
                }
            });
        } catch (RejectedExecutionException e) {
            LOG.debug("lease-events executor refused self-healing task: {}", e.getMessage());
        }
    }

    @Override
    public void close() {
        timer.shutdownNow();
        if (monitor != null) {
            monitor.close();
        }
    }
}
