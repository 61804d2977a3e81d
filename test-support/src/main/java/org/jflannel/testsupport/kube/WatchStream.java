package org.jflannel.testsupport.kube;

import io.fabric8.mockwebserver.crud.AttributeSet;

import java.util.List;
import java.util.Optional;

/**
 * One open watch: what it selects, how far it has been served (its cursor, a resourceVersion), and
 * when its next bookmark and its end ({@code timeoutSeconds}) are due. {@link #pump} sends what is
 * due; only the hub's pump thread calls it, so events leave in resourceVersion order.
 */
final class WatchStream {

    private final WatchRequest request;
    private final AttributeSet query;
    private final WatchSink sink;
    private final String apiVersion;
    private final String kind;
    private final long bookmarkEveryNanos;
    private final long deadlineNanos;
    private long nextBookmarkNanos;
    private long cursor;
    private List<String> initial;
    private String failure;

    /**
     * @param initial objects to send as ADDED before any change (the state at {@code cursor}), or null
     * @param failure an ERROR event to send instead of anything else, then end; or null
     */
    WatchStream(WatchRequest request, AttributeSet query, WatchSink sink, String apiVersion, String kind,
                long cursor, List<String> initial, String failure, long bookmarkEveryNanos, long nowNanos) {
        this.request = request;
        this.query = query;
        this.sink = sink;
        this.apiVersion = apiVersion;
        this.kind = kind;
        this.cursor = cursor;
        this.initial = initial;
        this.failure = failure;
        this.bookmarkEveryNanos = bookmarkEveryNanos;
        this.nextBookmarkNanos = nowNanos + bookmarkEveryNanos;
        this.deadlineNanos = request.timeoutSeconds() == 0 ? Long.MAX_VALUE
                : nowNanos + request.timeoutSeconds() * 1_000_000_000L;
    }

    /** Sends what is due at {@code nowNanos}; {@code held}: deliver no changes yet. Returns false once ended. */
    boolean pump(WatchLog log, boolean held, long nowNanos) {
        if (!sink.open()) {
            return false;
        }
        if (failure != null) {
            return endWith(failure);
        }
        if (initial != null) {
            initial.forEach(o -> sink.send(WatchEvents.event("ADDED", o)));
            initial = null;
            if (request.sendInitialEvents()) {
                sink.send(WatchEvents.bookmark(apiVersion, kind, cursor, true));
            }
        }
        if (held) {
            return true;
        }
        Optional<List<WatchLog.Change>> changes = log.after(cursor);
        if (changes.isEmpty()) {
            return endWith(WatchEvents.expired(cursor, log.compactedThrough()));
        }
        for (WatchLog.Change c : changes.get()) {
            String type = typeFor(c);
            if (type != null) {
                sink.send(WatchEvents.event(type, c.json()));
            }
            cursor = c.rv();
        }
        if (request.bookmarks() && nowNanos - nextBookmarkNanos >= 0) {
            sink.send(WatchEvents.bookmark(apiVersion, kind, cursor, false));
            nextBookmarkNanos = nowNanos + bookmarkEveryNanos;
        }
        if (nowNanos - deadlineNanos >= 0) {
            sink.end();
            return false;
        }
        return true;
    }

    /** Ends this watch now with {@code event} (e.g. a 410 ERROR), unless it already ended. */
    void fail(String event) {
        if (sink.open()) {
            endWith(event);
        }
    }

    /** Ends this watch now without an error (the server going away). */
    void end() {
        if (sink.open()) {
            sink.end();
        }
    }

    long cursor() {
        return cursor;
    }

    private boolean endWith(String event) {
        sink.send(event);
        sink.end();
        return false;
    }

    /** As the real server filters: in before and after → MODIFIED, only before → DELETED, only after → ADDED. */
    private String typeFor(WatchLog.Change c) {
        boolean was = c.before() != null && selects(c.before());
        boolean is = c.after() != null && selects(c.after());
        return was && is ? "MODIFIED" : was ? "DELETED" : is ? "ADDED" : null;
    }

    private boolean selects(AttributeSet object) {
        return object.matches(query);
    }
}
