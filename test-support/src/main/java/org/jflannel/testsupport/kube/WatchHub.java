package org.jflannel.testsupport.kube;

import io.fabric8.mockwebserver.crud.AttributeSet;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;

/**
 * Serves watches the way the API server does, for both transports (chunked HTTP, WebSocket): a watch
 * without a resourceVersion (or "0") starts with the current state as ADDED events, one with a
 * resourceVersion gets every change after it, or a {@code 410 Gone} ERROR event when that history was
 * compacted; bookmarks when allowed; the end after {@code timeoutSeconds}.
 *
 * <p>One named thread ({@code kube-mock-watch}) writes to every stream, so each stream gets its events
 * in resourceVersion order and nothing is written on the HTTP server's event loop. It wakes on every
 * change and at least every {@value #TICK_MS} ms for bookmarks and timeouts. Fault injection
 * ({@link #hold}, {@link #expireAll}) runs on that thread too.
 */
final class WatchHub implements AutoCloseable {
    static final long TICK_MS = 200;

    private final NodeAwareCrudDispatcher store;
    private final long bookmarkEveryNanos;
    private final List<WatchStream> streams = new ArrayList<>(); // pump thread only
    private final ConcurrentLinkedQueue<WatchStream> opened = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private final Object wake = new Object();
    private final Thread pump;
    private boolean dirty;
    private volatile boolean held;
    private volatile boolean closed;

    WatchHub(NodeAwareCrudDispatcher store, Duration bookmarkEvery) {
        this.store = store;
        this.bookmarkEveryNanos = bookmarkEvery.toNanos();
        store.watchLog().onChange(this::signal);
        pump = new Thread(this::run, "kube-mock-watch");
        pump.setDaemon(true);
        pump.start();
    }

    /** Opens a watch on {@code sink}: takes the starting state now, sends from the pump thread. */
    void open(WatchRequest request, WatchSink sink) {
        long now = System.nanoTime();
        AttributeSet query = store.watchQuery(request);
        ResourceKinds.Kind kind = ResourceKinds.of(request.listPath());
        WatchStream stream;
        if (request.startsWithState()) {
            NodeAwareCrudDispatcher.Snapshot snap = store.snapshot(request);
            stream = new WatchStream(request, query, sink, kind.apiVersion(), kind.kind(), snap.rv(), snap.items(),
                    null, bookmarkEveryNanos, now);
        } else {
            long rv = request.resourceVersionNumber();
            long oldest = store.watchLog().compactedThrough();
            String failure = rv < oldest ? WatchEvents.expired(rv, oldest) : null;
            stream = new WatchStream(request, query, sink, kind.apiVersion(), kind.kind(), rv, null, failure,
                    bookmarkEveryNanos, now);
        }
        opened.add(stream);
        signal();
    }

    /** While held, open watches get no changes (as a client cut off from the server); false releases them. */
    void hold(boolean on) {
        held = on;
        signal();
    }

    /**
     * Compacts the history and answers every open watch with a {@code 410 Gone} ERROR event, ending
     * it; changes held back from those watches are never sent to them. A client must relist.
     */
    void expireAll() {
        runOnPump(() -> {
            store.watchLog().compact();
            long oldest = store.watchLog().compactedThrough();
            streams.forEach(s -> s.fail(WatchEvents.expired(s.cursor(), oldest)));
            streams.clear();
        });
    }

    /** Ends every open watch normally (the server going away); their clients re-watch. */
    void endAll() {
        runOnPump(() -> {
            streams.forEach(WatchStream::end);
            streams.clear();
        });
    }

    /** Open watches now (for tests). */
    int openCount() {
        CompletableFuture<Integer> n = new CompletableFuture<>();
        tasks.add(() -> n.complete(streams.size()));
        signal();
        return n.join();
    }

    private void runOnPump(Runnable task) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        tasks.add(() -> {
            try {
                task.run();
            } finally {
                done.complete(null);
            }
        });
        signal();
        try {
            done.get(30, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted waiting for the watch pump", e);
        } catch (Exception e) {
            throw new IllegalStateException("watch pump did not run the task: " + e, e);
        }
    }

    private void signal() {
        synchronized (wake) {
            dirty = true;
            wake.notifyAll();
        }
    }

    private void run() {
        while (!closed) {
            synchronized (wake) {
                if (!dirty) {
                    try {
                        wake.wait(TICK_MS);
                    } catch (InterruptedException e) {
                        return;
                    }
                }
                dirty = false;
            }
            for (WatchStream s = opened.poll(); s != null; s = opened.poll()) {
                streams.add(s);
            }
            for (Runnable t = tasks.poll(); t != null; t = tasks.poll()) {
                t.run();
            }
            long now = System.nanoTime();
            streams.removeIf(s -> !pumpOne(s, now));
        }
        streams.forEach(WatchStream::end);
    }

    private boolean pumpOne(WatchStream s, long now) {
        try {
            return s.pump(store.watchLog(), held, now);
        } catch (RuntimeException e) {
            System.err.println("kube-mock watch failed, ending it: " + e);
            s.end();
            return false;
        }
    }

    @Override
    public void close() throws InterruptedException {
        closed = true;
        signal();
        pump.join(5_000);
    }
}
