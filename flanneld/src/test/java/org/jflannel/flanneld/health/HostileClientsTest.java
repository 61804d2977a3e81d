package org.jflannel.flanneld.health;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The health and metrics server keeps answering while other clients misbehave (issue 38): a kubelet's
 * liveness probe must not fail because something on the node holds connections open half-sent. The
 * bound is the probe's: each request here must be answered within 1 s or it fails.
 */
class HostileClientsTest {
    private static final Duration PROBE = Duration.ofSeconds(1);
    private HealthServer server;
    private final List<Socket> hostile = new ArrayList<>();
    private final HttpClient client = HttpClient.newBuilder().connectTimeout(PROBE).build();

    @BeforeEach
    void start() throws Exception {
        server = HealthServer.start(InetAddress.getLoopbackAddress(), 0, () -> true, new Metrics());
    }

    @AfterEach
    void stop() throws Exception {
        for (Socket s : hostile) {
            s.close();
        }
        server.close();
    }

    @Test
    void halfARequestLineHeldOpenDoesNotDelayHealthz() throws Exception {
        hold(1, "GET /hea");

        assertThat(get("/healthz").statusCode()).isEqualTo(200);
    }

    @Test
    void aHundredHalfRequestsHeldOpenDoNotDelayHealthzOrMetrics() throws Exception {
        hold(50, "GET /healthz HTTP/1.1\r\nHost: x\r\n"); // headers never finished
        hold(50, "GE");                                    // not even the method

        for (int i = 0; i < 5; i++) {
            assertThat(get("/healthz").statusCode()).isEqualTo(200);
        }
        assertThat(get("/metrics").statusCode()).isEqualTo(200);
    }

    @Test
    void connectionsThatSendNothingDoNotDelayHealthz() throws Exception {
        hold(100, "");

        assertThat(get("/healthz").statusCode()).isEqualTo(200);
    }

    /**
     * The kernel completes every handshake of a burst without waiting for the server's accepting thread: a
     * SYN dropped for a full queue is retried only after 1 s, more than each connect is given here. With
     * the JDK server's old backlog of 16 the 18th connection took 1.0 s, every time.
     */
    @Test
    void aBurstOfTwoHundredConnectionsLosesNoHandshakeAndHealthzStillAnswers() throws Exception {
        for (int i = 0; i < 200; i++) {
            Socket s = new Socket();
            hostile.add(s);
            s.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), server.port()), 900);
        }

        assertThat(get("/healthz").statusCode()).isEqualTo(200);
    }

    private void hold(int n, String partial) throws Exception {
        for (int i = 0; i < n; i++) {
            Socket s = new Socket(InetAddress.getLoopbackAddress(), server.port());
            hostile.add(s);
            OutputStream out = s.getOutputStream();
            out.write(partial.getBytes(StandardCharsets.US_ASCII));
            out.flush();
        }
    }

    private HttpResponse<String> get(String path) throws Exception {
        HttpRequest r = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path)).timeout(PROBE).build();
        return client.send(r, HttpResponse.BodyHandlers.ofString());
    }
}
