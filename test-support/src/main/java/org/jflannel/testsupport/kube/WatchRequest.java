package org.jflannel.testsupport.kube;

import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * A watch request as the API server reads it: {@code GET <collection>?watch=true} (or {@code watch=1})
 * with {@code resourceVersion} (empty: start with the current state), {@code allowWatchBookmarks},
 * {@code timeoutSeconds} (0: no limit), {@code sendInitialEvents} (watch-list), a label selector kept
 * in {@code listPath}, and a {@code metadata.name} field selector.
 *
 * @param listPath the collection path with only its label selector, e.g. {@code /api/v1/nodes?labelSelector=a%3Db}
 * @param resourceVersion "" when not given; else a non-negative integer
 * @param name the object name from {@code fieldSelector=metadata.name=<name>}, "" when none
 */
record WatchRequest(String listPath, String resourceVersion, boolean bookmarks, long timeoutSeconds,
                    boolean sendInitialEvents, String name) {

    WatchRequest {
        java.util.Objects.requireNonNull(listPath, "listPath");
        java.util.Objects.requireNonNull(resourceVersion, "resourceVersion");
        java.util.Objects.requireNonNull(name, "name");
        if (timeoutSeconds < 0) {
            throw new IllegalArgumentException("timeoutSeconds: expected >= 0, got " + timeoutSeconds);
        }
    }

    /** True for {@code GET ...?watch=true} and {@code watch=1}. */
    static boolean isWatch(String method, String uri) {
        if (!method.equalsIgnoreCase("GET")) {
            return false;
        }
        String w = query(uri).get("watch");
        return "true".equals(w) || "1".equals(w);
    }

    /** Parses a watch URI; a malformed parameter fails with a message naming it. */
    static WatchRequest parse(String uri) {
        Map<String, String> q = query(uri);
        int at = uri.indexOf('?');
        String path = at < 0 ? uri : uri.substring(0, at);
        String labels = q.getOrDefault("labelSelector", "");
        String listPath = labels.isEmpty() ? path
                : path + "?labelSelector=" + java.net.URLEncoder.encode(labels, StandardCharsets.UTF_8);
        String rv = q.getOrDefault("resourceVersion", "");
        if (!rv.isEmpty() && !rv.chars().allMatch(Character::isDigit)) {
            throw new IllegalArgumentException("resourceVersion: expected a non-negative integer, got \"" + rv + "\"");
        }
        long timeout = 0;
        String t = q.getOrDefault("timeoutSeconds", "");
        if (!t.isEmpty()) {
            try {
                timeout = Long.parseLong(t);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("timeoutSeconds: expected an integer, got \"" + t + "\"");
            }
        }
        return new WatchRequest(listPath, rv, "true".equals(q.get("allowWatchBookmarks")), timeout,
                "true".equals(q.get("sendInitialEvents")), nameFrom(q.getOrDefault("fieldSelector", "")));
    }

    /** Whether the watch starts with the current state (synthetic ADDED events) rather than after a version. */
    boolean startsWithState() {
        return resourceVersion.isEmpty() || resourceVersion.equals("0") || sendInitialEvents;
    }

    long resourceVersionNumber() {
        return resourceVersion.isEmpty() ? 0 : Long.parseLong(resourceVersion);
    }

    private static String nameFrom(String fieldSelector) {
        for (String term : fieldSelector.split(",")) {
            String t = term.strip();
            for (String op : new String[] {"metadata.name==", "metadata.name="}) {
                if (t.startsWith(op)) {
                    return t.substring(op.length());
                }
            }
        }
        return "";
    }

    private static Map<String, String> query(String uri) {
        Map<String, String> out = new LinkedHashMap<>();
        int at = uri.indexOf('?');
        if (at < 0) {
            return out;
        }
        for (String pair : uri.substring(at + 1).split("&")) {
            if (pair.isEmpty()) {
                continue;
            }
            int eq = pair.indexOf('=');
            String k = URLDecoder.decode(eq < 0 ? pair : pair.substring(0, eq), StandardCharsets.UTF_8);
            String v = eq < 0 ? "" : URLDecoder.decode(pair.substring(eq + 1), StandardCharsets.UTF_8);
            out.putIfAbsent(k, v);
        }
        return out;
    }
}
