package org.jflannel.testsupport.kube;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

/** The JSON lines of a watch stream, as the API server writes them ({@code metav1.WatchEvent}). */
final class WatchEvents {
    private static final ObjectMapper JSON = new ObjectMapper();

    private WatchEvents() {
    }

    /** {@code {"type":"ADDED","object":{...}}}; {@code objectJson} is inserted as it is. */
    static String event(String type, String objectJson) {
        return "{\"type\":\"" + type + "\",\"object\":" + objectJson + "}";
    }

    /**
     * A bookmark: only the kind and the resourceVersion the client may resume from; with
     * {@code initialEventsEnd} the annotation that ends a watch-list's initial events.
     */
    static String bookmark(String apiVersion, String kind, long rv, boolean initialEventsEnd) {
        ObjectNode object = JSON.createObjectNode();
        object.put("kind", kind);
        object.put("apiVersion", apiVersion);
        ObjectNode metadata = object.putObject("metadata");
        metadata.put("resourceVersion", Long.toString(rv));
        if (initialEventsEnd) {
            metadata.putObject("annotations").put("k8s.io/initial-events-end", "true");
        }
        return event("BOOKMARK", object.toString());
    }

    /**
     * The real server's answer to a watch from a compacted resourceVersion: HTTP 200 and one ERROR
     * event carrying a {@code 410} Status with reason {@code Expired}, then the end of the stream.
     */
    static String expired(long requested, long oldest) {
        return event("ERROR", status(410, "Expired", "too old resource version: " + requested + " (" + oldest + ")"));
    }

    /** A {@code metav1.Status} failure object. */
    static String status(int code, String reason, String message) {
        ObjectNode s = JSON.createObjectNode();
        s.put("kind", "Status");
        s.put("apiVersion", "v1");
        s.putObject("metadata");
        s.put("status", "Failure");
        s.put("message", message);
        s.put("reason", reason);
        s.put("code", code);
        return s.toString();
    }
}
