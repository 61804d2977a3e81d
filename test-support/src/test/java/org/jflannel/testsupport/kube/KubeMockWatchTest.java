package org.jflannel.testsupport.kube;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import org.jflannel.testsupport.cluster.Wait;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Watches on the mock API server behave as on a real one: plain chunked JSON streams (what client-go
 * and kubectl read), resourceVersion honoured, 410 Gone for a compacted version, bookmarks,
 * timeoutSeconds; and fabric8's informer (ours) keeps a true picture through all of it.
 */
class KubeMockWatchTest {
    private static final Duration WITHIN = Duration.ofSeconds(10);
    private static final ObjectMapper JSON = new ObjectMapper();

    private KubeMockServer server;
    private KubernetesClient client;

    private void start(Duration bookmarkEvery) {
        server = KubeMockServer.start(InetAddress.getLoopbackAddress(), 0, bookmarkEvery);
        client = server.newClient();
    }

    private void start() {
        start(KubeMockServer.BOOKMARK_EVERY);
    }

    @AfterEach
    void stop() {
        if (client != null) {
            client.close();
        }
        if (server != null) {
            server.close();
        }
    }

    private Node create(String name, Map<String, String> labels) {
        return client.nodes().resource(new NodeBuilder().withNewMetadata().withName(name).withLabels(labels)
                .endMetadata().withNewSpec().withPodCIDR("10.244." + name.replaceAll("\\D", "") + ".0/24").endSpec()
                .build()).create();
    }

    private Node annotate(String name, String key, String value) {
        return client.nodes().withName(name).edit(n -> new NodeBuilder(n).editMetadata().addToAnnotations(key, value)
                .endMetadata().build());
    }

    private static long rv(Node n) {
        return Long.parseLong(n.getMetadata().getResourceVersion());
    }

    private String get(String path) throws Exception {
        HttpResponse<String> r = HttpClient.newHttpClient().send(HttpRequest.newBuilder(URI.create(server.url() + path))
                .build(), HttpResponse.BodyHandlers.ofString());
        assertThat(r.statusCode()).as("GET %s: %s", path, r.body()).isEqualTo(200);
        return r.body();
    }

    private static String typeAndName(JsonNode event) {
        return event.path("type").asText() + " " + event.path("object").path("metadata").path("name").asText();
    }

    @Test
    void aPlainWatchIsAChunkedJsonStreamOfTheStateThenEveryChange() throws Exception {
        start();
        create("n1", Map.of());
        try (WatchReader w = WatchReader.open(server.url() + "/api/v1/nodes?watch=true")) {
            assertThat(w.status()).isEqualTo(200);
            assertThat(w.header("Content-Type")).isEqualTo("application/json");
            assertThat(w.header("Transfer-Encoding")).isEqualTo("chunked");
            assertThat(typeAndName(w.next(WITHIN))).isEqualTo("ADDED n1");

            create("n2", Map.of());
            Node changed = annotate("n1", "a", "b");
            client.nodes().withName("n2").delete();

            assertThat(typeAndName(w.next(WITHIN))).isEqualTo("ADDED n2");
            JsonNode modified = w.next(WITHIN);
            assertThat(typeAndName(modified)).isEqualTo("MODIFIED n1");
            assertThat(modified.path("object").path("metadata").path("resourceVersion").asLong()).isEqualTo(rv(changed));
            JsonNode deleted = w.next(WITHIN);
            assertThat(typeAndName(deleted)).isEqualTo("DELETED n2");
            assertThat(deleted.path("object").path("metadata").path("resourceVersion").asLong())
                    .as("a deletion gets its own resourceVersion").isGreaterThan(rv(changed));
        }
        assertThat(server.watchTransports()).isEqualTo(new KubeMockServer.WatchTransports(1, 0));
    }

    @Test
    void aListCarriesItsKindAndResourceVersionAndAWatchFromThereGetsOnlyLaterChanges() throws Exception {
        start();
        create("n1", Map.of());
        create("n2", Map.of());
        JsonNode list = JSON.readTree(get("/api/v1/nodes?limit=500"));
        assertThat(list.path("kind").asText()).isEqualTo("NodeList");
        long listed = list.path("metadata").path("resourceVersion").asLong();
        assertThat(listed).isPositive();

        annotate("n1", "after", "list");
        try (WatchReader w = WatchReader.open(server.url()
                + "/api/v1/nodes?allowWatchBookmarks=true&resourceVersion=" + listed + "&timeoutSeconds=300&watch=true")) {
            assertThat(typeAndName(w.next(WITHIN))).as("only the change after the list").isEqualTo("MODIFIED n1");
            create("n3", Map.of());
            assertThat(typeAndName(w.next(WITHIN))).isEqualTo("ADDED n3");
        }
    }

    @Test
    void aWatchFromACompactedVersionIsAnswered410GoneAsAnErrorEvent() throws Exception {
        start();
        long old = rv(create("n1", Map.of()));
        create("n2", Map.of());
        server.expireWatches(); // compacts the history

        try (WatchReader w = WatchReader.open(server.url() + "/api/v1/nodes?watch=true&resourceVersion=" + old)) {
            assertThat(w.status()).as("the real server answers 200 and an ERROR event").isEqualTo(200);
            JsonNode error = w.next(WITHIN);
            assertThat(error.path("type").asText()).isEqualTo("ERROR");
            assertThat(error.path("object").path("kind").asText()).isEqualTo("Status");
            assertThat(error.path("object").path("code").asInt()).isEqualTo(410);
            assertThat(error.path("object").path("reason").asText()).isEqualTo("Expired");
            assertThat(error.path("object").path("message").asText()).startsWith("too old resource version: " + old);
            assertThat(w.endsWithin(WITHIN)).isTrue();
        }
    }

    @Test
    void anOpenWatchThatFellBehindIsAnswered410AndItsHeldChangesAreNeverSentOnIt() throws Exception {
        start();
        create("n1", Map.of());
        try (WatchReader w = WatchReader.open(server.url() + "/api/v1/nodes?watch=true")) {
            assertThat(typeAndName(w.next(WITHIN))).isEqualTo("ADDED n1");
            server.holdWatches(true);
            create("n2", Map.of());
            server.expireWatches();
            server.holdWatches(false);

            JsonNode error = w.next(WITHIN);
            assertThat(error.path("type").asText()).isEqualTo("ERROR");
            assertThat(error.path("object").path("code").asInt()).isEqualTo(410);
            assertThat(w.endsWithin(WITHIN)).isTrue();
        }
    }

    @Test
    void bookmarksCarryTheLatestVersionOnlyWhenAllowed() throws Exception {
        start(Duration.ofMillis(300));
        create("n1", Map.of());
        long latest = rv(annotate("n1", "k", "v"));
        try (WatchReader allowed = WatchReader.open(server.url() + "/api/v1/nodes?watch=true&allowWatchBookmarks=true"
                + "&resourceVersion=" + latest);
             WatchReader plain = WatchReader.open(server.url() + "/api/v1/nodes?watch=true&resourceVersion=" + latest)) {
            JsonNode bookmark = allowed.next(WITHIN);
            assertThat(bookmark.path("type").asText()).isEqualTo("BOOKMARK");
            assertThat(bookmark.path("object").path("kind").asText()).isEqualTo("Node");
            assertThat(bookmark.path("object").path("metadata").path("resourceVersion").asLong()).isEqualTo(latest);

            create("n2", Map.of());
            assertThat(typeAndName(plain.next(WITHIN))).as("no bookmark before the change").isEqualTo("ADDED n2");
        }
    }

    @Test
    void aWatchListEndsItsInitialEventsWithAnAnnotatedBookmark() throws Exception {
        start();
        create("n1", Map.of());
        try (WatchReader w = WatchReader.open(server.url() + "/api/v1/nodes?watch=true&allowWatchBookmarks=true"
                + "&sendInitialEvents=true&resourceVersionMatch=NotOlderThan")) {
            assertThat(typeAndName(w.next(WITHIN))).isEqualTo("ADDED n1");
            JsonNode end = w.next(WITHIN);
            assertThat(end.path("type").asText()).isEqualTo("BOOKMARK");
            assertThat(end.path("object").path("metadata").path("annotations").path("k8s.io/initial-events-end").asText())
                    .isEqualTo("true");
        }
    }

    @Test
    void timeoutSecondsEndsTheStream() throws Exception {
        start();
        try (WatchReader w = WatchReader.open(server.url() + "/api/v1/nodes?watch=true&timeoutSeconds=1")) {
            assertThat(w.endsWithin(WITHIN)).isTrue();
        }
    }

    @Test
    void selectorsFilterAndAnObjectLeavingTheSelectionIsDeletedForThatWatch() throws Exception {
        start();
        create("n1", Map.of("role", "worker"));
        create("n2", Map.of("role", "worker"));
        try (WatchReader byLabel = WatchReader.open(server.url() + "/api/v1/nodes?watch=true&labelSelector=role%3Dworker");
             WatchReader byName = WatchReader.open(server.url() + "/api/v1/nodes?watch=true"
                     + "&fieldSelector=metadata.name%3Dn2")) {
            assertThat(List.of(typeAndName(byLabel.next(WITHIN)), typeAndName(byLabel.next(WITHIN))))
                    .containsExactlyInAnyOrder("ADDED n1", "ADDED n2");
            assertThat(typeAndName(byName.next(WITHIN))).isEqualTo("ADDED n2");

            client.nodes().withName("n1").edit(n -> new NodeBuilder(n).editMetadata().addToLabels("role", "master")
                    .endMetadata().build());
            annotate("n2", "x", "y");

            assertThat(typeAndName(byLabel.next(WITHIN))).isEqualTo("DELETED n1");
            assertThat(typeAndName(byLabel.next(WITHIN))).isEqualTo("MODIFIED n2");
            assertThat(typeAndName(byName.next(WITHIN))).as("n1's change is not n2's watch's business")
                    .isEqualTo("MODIFIED n2");
        }
    }

    @Test
    void discoveryDocumentsAreWhatAGoClientExpects() throws Exception {
        start();
        assertThat(JSON.readTree(get("/api")).path("versions").toString()).isEqualTo("[\"v1\"]");
        JsonNode core = JSON.readTree(get("/api/v1"));
        assertThat(core.path("kind").asText()).isEqualTo("APIResourceList");
        assertThat(core.path("resources").findValuesAsText("name")).contains("nodes", "nodes/status", "pods");
        assertThat(JSON.readTree(get("/apis")).path("kind").asText()).isEqualTo("APIGroupList");
        assertThat(JSON.readTree(get("/version")).path("major").asText()).isEqualTo("1");
    }

    @Test
    void fabric8InformerFollowsChangesAndRelistsAfter410WithNothingDroppedOrDuplicated() throws Exception {
        start();
        create("n1", Map.of());
        create("n2", Map.of());
        List<String> seen = new CopyOnWriteArrayList<>();
        SharedIndexInformer<Node> informer = client.nodes().inform(new ResourceEventHandler<>() {
            @Override
            public void onAdd(Node n) {
                seen.add("add " + n.getMetadata().getName());
            }

            @Override
            public void onUpdate(Node before, Node after) {
                if (!before.getMetadata().getResourceVersion().equals(after.getMetadata().getResourceVersion())) {
                    seen.add("update " + after.getMetadata().getName() + " " + after.getMetadata().getAnnotations());
                }
            }

            @Override
            public void onDelete(Node n, boolean unknownFinalState) {
                seen.add("delete " + n.getMetadata().getName());
            }
        });
        try {
            Wait.until("informer has n1 and n2", WITHIN, () -> seen.size() == 2);

            server.holdWatches(true); // the informer falls behind these three changes
            create("n3", Map.of());
            annotate("n1", "k", "v");
            client.nodes().withName("n2").delete();
            server.expireWatches();
            server.holdWatches(false);

            Wait.until("informer relisted", WITHIN, () -> informer.getStore().list().size() == 2
                    && informer.getStore().getByKey("n1") != null
                    && "v".equals(informer.getStore().getByKey("n1").getMetadata().getAnnotations().get("k")));
            assertThat(seen).containsExactlyInAnyOrder("add n1", "add n2", "add n3", "update n1 {k=v}", "delete n2");

            create("n4", Map.of());
            Wait.until("informer watches again after the relist", WITHIN, () -> informer.getStore().getByKey("n4") != null);
        } finally {
            informer.close();
        }
        KubeMockServer.WatchTransports t = server.watchTransports();
        assertThat(t.chunked() + t.websocket()).as("the informer re-watched after the 410").isGreaterThanOrEqualTo(2);
        System.out.println("fabric8 informer watch transports: " + t);
    }

    @Test
    void anOutageDropsConnectionsKeepsTheStoreAndResumesOnTheSamePort() throws Exception {
        start();
        create("n1", Map.of());
        int port = server.port();
        try (WatchReader w = WatchReader.open(server.url() + "/api/v1/nodes?watch=true")) {
            assertThat(typeAndName(w.next(WITHIN))).isEqualTo("ADDED n1");
            server.stopServing();
            assertThat(w.endsWithin(WITHIN)).as("the open watch ends with the outage").isTrue();
        }
        server.resumeServing();

        assertThat(server.port()).isEqualTo(port);
        assertThat(JSON.readTree(get("/api/v1/nodes")).path("items").size()).isEqualTo(1);
    }
}
