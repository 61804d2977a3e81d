package org.jflannel.core.peers;

import java.time.Duration;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ours (REFERENCE §6.10): decides when a {@link PeerLoop} runs a reconcile pass, and hands every pass to the
 * {@code lease-events} executor (never runs one itself). The backend's netlink watcher says what it saw:
 * a change that matters ({@link #reconcileSoon}: debounced, so the hundred deletions of a device going down
 * make one pass) or its device deleted ({@link #deviceGone}: a full pass at once, which re-creates it; a failed
 * re-creation is retried with back-off). Every interval a full pass.
 */
public final class Healing implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Healing.class);

    /** What the passes run on: the loop. */
    public interface Target {
        void reconcile(boolean full);

        boolean closed();
    }

    /** Delayed and periodic tasks on the healing's own timer thread; a fake one in tests. */
    public interface Timer extends AutoCloseable {
        void schedule(Runnable task, Duration delay);

        void every(Runnable task, Duration interval);

        @Override
        void close();
    }

    private final String name;
    private final Target target;
    private final Executor leaseEvents;
    private final HealTiming timing;
    private final Timer timer;
    private final AtomicBoolean reconcilePending = new AtomicBoolean();
    /** Set by changes that can make a failed write possible: the next debounced pass is a full one. */
    private final AtomicBoolean full = new AtomicBoolean();
    private final AtomicBoolean recreatePending = new AtomicBoolean();
    private volatile Duration backoff;
    /** The backend's event source (its netlink watch), closed with this. */
    private volatile AutoCloseable source;

    /**
     * @param name         the backend, for log lines
     * @param leaseEvents  runs a task on the daemon's {@code lease-events} thread
     */
    public Healing(String name, Target target, Executor leaseEvents, HealTiming timing, Timer timer) {
        this.name = name;
        this.target = target;
        this.leaseEvents = leaseEvents;
        this.timing = timing;
        this.timer = timer;
        this.backoff = timing.recreateMin();
    }

    /**
     * Starts the periodic full pass (unless its interval is zero).
     *
     * @param events the backend's watch that calls {@link #reconcileSoon} and {@link #deviceGone}; closed with this
     */
    public Healing start(AutoCloseable events) {
        this.source = events;
        if (timing.reconcileInterval().toMillis() > 0) {
            timer.every(() -> hand(() -> target.reconcile(true)), timing.reconcileInterval());
        }
        return this;
    }

    /**
     * Something that concerns our entries changed (an entry deleted, the device down): a pass after the
     * debounce. {@code fullPass}: the change can make failed writes or refused peers possible (a link or
     * address change), so that pass retries them too.
     */
    public void reconcileSoon(boolean fullPass) {
        if (fullPass) {
            full.set(true);
        }
        if (reconcilePending.compareAndSet(false, true)) {
            schedule(() -> {
                reconcilePending.set(false);
                boolean all = full.getAndSet(false);
                hand(() -> target.reconcile(all));
            }, timing.debounce());
        }
    }

    /** Our device was deleted: a full pass now, which re-creates it and replays every peer. */
    public void deviceGone() {
        scheduleRecreate(Duration.ZERO);
    }

    private void scheduleRecreate(Duration delay) {
        if (recreatePending.compareAndSet(false, true)) {
            schedule(() -> {
                recreatePending.set(false);
                hand(() -> target.reconcile(true)); // the pass re-creates missing devices first, then replays
            }, delay);
        }
    }

    /** Called on lease-events when a re-creation failed: try again after the next back-off step. */
    void retryDeviceLater() {
        Duration d = backoff;
        backoff = new Backoff(timing.recreateMin(), timing.recreateMax()).next(d);
        LOG.warn("{} device recreate retry in={}ms", name, d.toMillis());
        scheduleRecreate(d);
    }

    /** A re-creation worked: the next failure starts the back-off again at its minimum. */
    void resetBackoff() {
        backoff = timing.recreateMin();
    }

    /** The delay before the next re-creation attempt, should the current one fail. */
    Duration backoff() {
        return backoff;
    }

    private void hand(Runnable task) {
        if (target.closed()) {
            return;
        }
        try {
            leaseEvents.execute(() -> {
                if (!target.closed()) {
                    task.run();
                }
            });
        } catch (RejectedExecutionException e) {
            LOG.debug("lease-events executor refused self-healing task: {}", e.getMessage());
        }
    }

    private void schedule(Runnable r, Duration delay) {
        try {
            timer.schedule(r, delay);
        } catch (RejectedExecutionException e) {
            LOG.debug("{} healing timer stopped, task dropped", name);
        }
    }

    /** Stops the timer, then the event source. */
    @Override
    public void close() {
        timer.close();
        AutoCloseable s = source;
        if (s != null) {
            try {
                s.close();
            } catch (Exception e) {
                LOG.warn("{} watch close failed error={}", name, e.toString());
            }
        }
    }

    /** A timer on one named daemon thread ({@code vxlan-timer}). */
    public static Timer thread(String threadName) {
        ScheduledThreadPoolExecutor t = new ScheduledThreadPoolExecutor(1, r -> {
            Thread th = new Thread(r, threadName);
            th.setDaemon(true);
            return th;
        });
        t.setRemoveOnCancelPolicy(true);
        return new Timer() {
            @Override
            public void schedule(Runnable task, Duration delay) {
                t.schedule(task, delay.toMillis(), TimeUnit.MILLISECONDS);
            }

            @Override
            public void every(Runnable task, Duration interval) {
                long ms = interval.toMillis();
                t.scheduleWithFixedDelay(task, ms, ms, TimeUnit.MILLISECONDS);
            }

            @Override
            public void close() {
                t.shutdownNow();
            }
        };
    }
}
