package org.jflannel.testsupport.kube;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.List;

/**
 * Paginated lists, as a real API server serves them ({@code limit} and {@code continue}): the items in a fixed
 * order (namespace, then name), after the last one the token names, at most {@code limit} of them, and while more remain a {@code metadata.continue}
 * token and {@code remainingItemCount}. Every page says the first page's resourceVersion (the token carries it), as
 * the real server's pages are one snapshot: a watch from it replays whatever changed meanwhile. Informers list in
 * pages (fabric8's {@code withLimit}, client-go's 500); without this, the stand-in sent every object in one answer,
 * which no real server does and a client with a small heap cannot take at 10,000 pods.
 */
final class ListPages {
    private ListPages() {
    }

    /** The page {@code query} (a path's query string, or empty) asks of {@code list}, which is changed in place. */
    static void apply(ObjectNode list, String query) {
        int limit = 0;
        String token = "";
        for (String kv : query.split("&")) {
            int eq = kv.indexOf('=');
            if (eq < 0) {
                continue;
            }
            String k = kv.substring(0, eq);
            String v = URLDecoder.decode(kv.substring(eq + 1), StandardCharsets.UTF_8);
            if (k.equals("limit")) {
                limit = Integer.parseInt(v);
            } else if (k.equals("continue")) {
                token = v;
            }
        }
        if (limit <= 0 && token.isEmpty()) {
            return;
        }
        List<JsonNode> items = new ArrayList<>();
        list.path("items").forEach(items::add);
        items.sort(Comparator.comparing(ListPages::key));
        int from = 0;
        ObjectNode meta = list.with("metadata");
        String rv = meta.path("resourceVersion").asText("");
        if (!token.isEmpty()) { // the token: the first page's resourceVersion and the last key given, as the real one
            String[] t = new String(Base64.getUrlDecoder().decode(token), StandardCharsets.UTF_8).split("\n", 2);
            rv = t[0];
            while (from < items.size() && key(items.get(from)).compareTo(t[1]) <= 0) {
                from++;
            }
        }
        int to = limit <= 0 ? items.size() : Math.min(items.size(), from + limit);
        ArrayNode page = list.putArray("items");
        for (int i = from; i < to; i++) {
            page.add(items.get(i));
        }
        meta.put("resourceVersion", rv);
        if (to < items.size()) {
            String next = rv + "\n" + key(items.get(to - 1));
            meta.put("continue", Base64.getUrlEncoder().withoutPadding().encodeToString(next.getBytes(StandardCharsets.UTF_8)));
            meta.put("remainingItemCount", items.size() - to);
        } else {
            meta.remove("continue");
            meta.remove("remainingItemCount");
        }
    }

    /** An item's place in the order: namespace, then name (a NUL between: no name holds one). */
    private static String key(JsonNode item) {
        return item.path("metadata").path("namespace").asText() + "\u0000" + item.path("metadata").path("name").asText();
    }
}
