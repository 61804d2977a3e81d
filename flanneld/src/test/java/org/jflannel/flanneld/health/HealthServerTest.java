package org.jflannel.flanneld.health;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class HealthServerTest {
    // one server for the class: stopping waits up to the 3 s grace period for idle client connections
    private static final AtomicBoolean ready = new AtomicBoolean();
    private static final Metrics metrics = new Metrics();
    private static final java.util.concurrent.atomic.AtomicReference<String> peersDoc =
            new java.util.concurrent.atomic.AtomicReference<>("{\"probing\":true,\"peers\":[]}");
    private static HealthServer server;
    private final HttpClient client = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @BeforeAll
    static void start() throws Exception {
        server = HealthServer.start(InetAddress.getLoopbackAddress(), 0, ready::get, metrics, () -> {
            String doc = peersDoc.get();
            if (doc == null) {
                throw new java.io.IOException("dump failed");
            }
            return doc;
        });
    }

    @AfterAll
    static void stop() {
        server.close();
    }

    @BeforeEach
    void notReady() {
        ready.set(false);
    }

    @Test
    void healthzIsAlways200() throws Exception {
        HttpResponse<String> r = get("/healthz");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.body()).isEqualTo("flanneld is running");
    }

    @Test
    void readyzIs503UntilReadyThen200() throws Exception {
        HttpResponse<String> before = get("/readyz");
        assertThat(before.statusCode()).isEqualTo(503);
        assertThat(before.body()).isEqualTo("flanneld is not ready yet");
        ready.set(true);
        HttpResponse<String> after = get("/readyz");
        assertThat(after.statusCode()).isEqualTo(200);
        assertThat(after.body()).isEqualTo("flanneld is ready");
    }

    @Test
    void unknownPathsAre404() throws Exception {
        assertThat(get("/healthz/x").statusCode()).isEqualTo(404);
        assertThat(get("/").statusCode()).isEqualTo(404);
    }

    @Test
    void metricsShowWhatWasReported() throws Exception {
        metrics.setLeases(3);
        metrics.addKernelEntriesProgrammed(9);
        metrics.addScrapeHook(() -> metrics.addKernelEntriesRemoved(1));
        metrics.addRepairs("route", 2);
        metrics.observeProgrammedSeconds(0.004);
        metrics.error("apply");
        metrics.error("apply");
        HttpResponse<String> r = get("/metrics");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("Content-Type")).hasValueSatisfying(v -> assertThat(v).startsWith("text/plain"));
        assertThat(r.body()).contains(
                "flanneld_leases 3.0",
                "flanneld_kernel_entries_programmed_total 9.0",
                "flanneld_kernel_entries_removed_total 1.0",
                "flanneld_reconcile_repairs_total{kind=\"route\"} 2.0",
                "flanneld_errors_total{kind=\"apply\"} 2.0",
                "flanneld_lease_event_programmed_seconds_bucket{le=\"0.005\"} 1",
                "flanneld_lease_event_programmed_seconds_bucket{le=\"0.001\"} 0",
                "flanneld_lease_event_programmed_seconds_count 1");
    }

    @Test
    void peersServesTheProbersDocumentAsJsonAndAFailureAs500WithoutTouchingReadiness() throws Exception {
        ready.set(true);
        HttpResponse<String> r = get("/peers");
        assertThat(r.statusCode()).isEqualTo(200);
        assertThat(r.headers().firstValue("Content-Type")).hasValue("application/json");
        assertThat(r.body()).isEqualTo("{\"probing\":true,\"peers\":[]}");
        peersDoc.set(null);
        try {
            HttpResponse<String> failed = get("/peers");
            assertThat(failed.statusCode()).isEqualTo(500);
            assertThat(failed.body()).contains("dump failed");
            assertThat(get("/readyz").statusCode()).as("a broken /peers never takes the node out").isEqualTo(200);
        } finally {
            peersDoc.set("{\"probing\":true,\"peers\":[]}");
        }
    }

    @Test
    void peerMetricsFollowTheProberAndARemovedPeerLeavesNoSeries() throws Exception {
        metrics.setPeerReachable("192.0.2.12", "10.244.2.0/24", true);
        metrics.setPeerReachable("192.0.2.13", "10.244.3.0/24", false);
        metrics.observePeerProbeRtt(0.0003);
        metrics.peerProbeFailure("overlay_blocked");
        String body = get("/metrics").body();
        assertThat(body).contains("flanneld_peer_reachable{peer=\"192.0.2.12\",subnet=\"10.244.2.0/24\"} 1.0",
                "flanneld_peer_reachable{peer=\"192.0.2.13\",subnet=\"10.244.3.0/24\"} 0.0",
                "flanneld_peer_probe_failures_total{cause=\"overlay_blocked\"} 1.0",
                "flanneld_peer_probe_rtt_seconds_bucket{le=\"5.0E-4\"} 1");
        metrics.removePeer("192.0.2.13", "10.244.3.0/24");
        assertThat(get("/metrics").body()).doesNotContain("peer=\"192.0.2.13\"");
    }

    private HttpResponse<String> get(String path) throws Exception {
        HttpRequest req = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path))
                .timeout(Duration.ofSeconds(5)).build();
        return client.send(req, HttpResponse.BodyHandlers.ofString());
    }
}
