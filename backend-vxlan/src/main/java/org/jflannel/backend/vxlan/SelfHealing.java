package org.jflannel.backend.vxlan;

import java.time.Duration;
import java.util.EnumSet;
import java.util.List;
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
 * Ours (REFERENCE §6.10): watches link, address, neighbour and route events of our device(s) on the
 * {@code vxlan-linkwatch} thread and schedules work on the {@code vxlan-timer} thread; both only hand
 * tasks to the lease-events executor, where the network does the work. A vanished device is re-created
 * with back-off 1 s → 30 s; a removed entry triggers a debounced reconcile; every interval a reconcile.
 */
final class SelfHealing implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(SelfHealing.class);

    private final VxlanNetwork network;
    private final Executor leaseEvents;
    private final VxlanSettings settings;
    private final ScheduledExecutorService timer;
    private final AtomicBoolean reconcilePending = new AtomicBoolean();
    private final AtomicBoolean recreatePending = new AtomicBoolean();
    private volatile Duration backoff;
    private volatile List<String> names;
    private volatile int[] indices = new int[0];
    private NetlinkMonitor monitor;

    private SelfHealing(VxlanNetwork network, Executor leaseEvents, VxlanSettings settings) {
        this.network = network;
        this.leaseEvents = leaseEvents;
        this.settings = settings;
        this.backoff = settings.recreateMin();
        ScheduledThreadPoolExecutor t = new ScheduledThreadPoolExecutor(1, r -> {
            Thread th = new Thread(r, "vxlan-timer");
            th.setDaemon(true);
            return th;
        });
        t.setRemoveOnCancelPolicy(true);
        this.timer = t;
    }

    /** Starts watching; the netlink socket joins the calling thread's network namespace. */
    static SelfHealing start(VxlanNetwork network, Executor leaseEvents, VxlanSettings settings) throws NetlinkException {
        SelfHealing h = new SelfHealing(network, leaseEvents, settings);
        h.refreshDevices();
        h.monitor = NetlinkMonitor.start("vxlan-linkwatch", EnumSet.of(NetlinkMonitor.Group.LINK,
                NetlinkMonitor.Group.ADDRESS, NetlinkMonitor.Group.NEIGHBOUR, NetlinkMonitor.Group.IPV4_ROUTE,
                NetlinkMonitor.Group.IPV6_ROUTE), h::onEvent);
        long every = settings.reconcileInterval().toMillis();
        if (every > 0) {
            h.timer.scheduleWithFixedDelay(() -> h.hand(h::reconcileAndRefresh), every, every, TimeUnit.MILLISECONDS);
        }
        return h;
    }

    /** Runs on vxlan-linkwatch: decide cheaply whether the event concerns us, never touch the kernel here. */
    private void onEvent(NetlinkEvent event) {
        if (event instanceof NetlinkEvent.LinkEvent le) {
            boolean ours = names.contains(le.link().name()) || isOurs(le.link().index());
            if (ours && le.deleted()) {
                LOG.warn("vxlan device deleted name={} index={}", le.link().name(), le.link().index());
                scheduleRecreate(Duration.ZERO);
            } else if (ours && !le.link().up()) {
                requestReconcile();
            }
            return;
        }
        if (!event.deleted()) {
            return;
        }
        if (isOurs(linkOf(event))) {
            requestReconcile();
        }
    }

    private static int linkOf(NetlinkEvent event) {
        if (event instanceof NetlinkEvent.AddressEvent a) {
            return a.address().linkIndex();
        } else if (event instanceof NetlinkEvent.RouteEvent r) {
            return r.route().linkIndex();
        } else if (event instanceof NetlinkEvent.NeighbourEvent n) {
            return n.neighbour().linkIndex();
        } else if (event instanceof NetlinkEvent.FdbEvent f) {
            return f.entry().linkIndex();
        }
        return 0;
    }

    private boolean isOurs(int index) {
        for (int i : indices) {
            if (i == index && index > 0) {
                return true;
            }
        }
        return false;
    }

    /** Debounced: many deletions (a device going away takes all its entries) make one reconcile. */
    void requestReconcile() {
        if (reconcilePending.compareAndSet(false, true)) {
            schedule(() -> {
                reconcilePending.set(false);
                hand(() -> {
                    network.reconcile(false);
                    refreshDevices();
                });
            }, settings.debounce());
        }
    }

    private void scheduleRecreate(Duration delay) {
        if (recreatePending.compareAndSet(false, true)) {
            schedule(() -> {
                recreatePending.set(false);
                hand(this::reconcileAndRefresh); // reconcile re-creates missing devices first, then replays
            }, delay);
        }
    }

    /** Called on lease-events when a re-creation failed: try again after the next back-off step. */
    void retryDeviceLater() {
        Duration d = backoff;
        backoff = new Backoff(settings.recreateMin(), settings.recreateMax()).next(d);
        LOG.warn("vxlan device recreate retry in={}ms", d.toMillis());
        scheduleRecreate(d);
    }

    /** A re-creation worked: the next failure starts the back-off again at its minimum. */
    void resetBackoff() {
        backoff = settings.recreateMin();
    }

    private void reconcileAndRefresh() {
        network.reconcile();
        refreshDevices();
    }

    private void refreshDevices() {
        List<VtepDevice> devs = network.devices();
        names = devs.stream().map(VtepDevice::name).toList();
        indices = devs.stream().mapToInt(VtepDevice::index).toArray();
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

    private void schedule(Runnable r, Duration delay) {
        try {
            timer.schedule(r, delay.toMillis(), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            LOG.debug("vxlan-timer stopped, task dropped");
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
