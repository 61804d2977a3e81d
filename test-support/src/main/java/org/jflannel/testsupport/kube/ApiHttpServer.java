package org.jflannel.testsupport.kube;

import io.fabric8.mockwebserver.dsl.HttpMethod;
import io.fabric8.mockwebserver.http.Headers;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.http.ServerWebSocket;

import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * The mock API server's HTTP side, on Vert.x (the stack fabric8's mock runs on): discovery documents,
 * watches through {@link WatchHub} as a chunked HTTP stream (client-go, kubectl) or a WebSocket
 * (fabric8 tries that first), everything else through the CRUD store. It can stop listening and
 * start again on the same port with the store intact, as an API server restarting in front of etcd.
 */
final class ApiHttpServer {
    private static final long WITHIN_SECONDS = 10;

    private final Vertx vertx;
    private final NodeAwareCrudDispatcher store;
    private final WatchHub watches;
    private final InetAddress host;
    private final java.util.concurrent.atomic.AtomicInteger chunkedWatches = new java.util.concurrent.atomic.AtomicInteger();
    private final java.util.concurrent.atomic.AtomicInteger socketWatches = new java.util.concurrent.atomic.AtomicInteger();
    private HttpServer server;
    private int port;

    ApiHttpServer(Vertx vertx, NodeAwareCrudDispatcher store, WatchHub watches, InetAddress host) {
        this.vertx = vertx;
        this.store = store;
        this.watches = watches;
        this.host = host;
    }

    /** Starts listening on {@code port} (0: a free one the first time, the same one after a stop). */
    synchronized void listen(int wanted) {
        if (server != null) {
            throw new IllegalStateException("already listening on " + port);
        }
        HttpServerOptions options = new HttpServerOptions().setHost(host.getHostAddress())
                .setPort(wanted == 0 ? port : wanted).setHttp2ClearTextEnabled(true)
                .setHandle100ContinueAutomatically(true).setReuseAddress(true);
        HttpServer s = vertx.createHttpServer(options).requestHandler(this::handle);
        port = await(s.listen(), "listen on " + host.getHostAddress() + ":" + options.getPort()).actualPort();
        server = s;
    }

    /** Stops listening and drops every connection (open watches end); the store is kept. */
    synchronized void stop() {
        if (server == null) {
            return;
        }
        watches.endAll();
        await(server.close(), "close the listener on port " + port);
        server = null;
    }

    synchronized boolean listening() {
        return server != null;
    }

    /** Watches served so far: as a chunked HTTP stream, and over a WebSocket. */
    KubeMockServer.WatchTransports transports() {
        return new KubeMockServer.WatchTransports(chunkedWatches.get(), socketWatches.get());
    }

    synchronized int port() {
        return port;
    }

    private void handle(HttpServerRequest req) {
        if (WatchRequest.isWatch(req.method().name(), req.uri())) {
            watch(req);
            return;
        }
        req.body().onSuccess(body -> respond(req.response(), serve(req, body)))
                .onFailure(e -> respond(req.response(), failure(500, "InternalError", "reading the request: " + e)));
    }

    private MockResponse serve(HttpServerRequest req, Buffer body) {
        RecordedRequest recorded = recorded(req, body);
        if (req.method().name().equals("GET")) {
            Optional<String> doc = Discovery.answer(req.uri(), host.getHostAddress() + ":" + port());
            if (doc.isPresent()) {
                MockResponse refused = store.admit(recorded);
                return refused != null ? refused : new MockResponse().setResponseCode(200).setBody(doc.get());
            }
        }
        return store.dispatch(recorded);
    }

    private void watch(HttpServerRequest req) {
        MockResponse refused = store.admit(recorded(req, null));
        if (refused != null) {
            respond(req.response(), refused);
            return;
        }
        WatchRequest request;
        try {
            request = WatchRequest.parse(req.uri());
        } catch (IllegalArgumentException e) {
            respond(req.response(), failure(400, "BadRequest", e.getMessage()));
            return;
        }
        String upgrade = req.getHeader("Upgrade");
        if (upgrade != null && upgrade.toLowerCase(Locale.ROOT).contains("websocket")) {
            socketWatches.incrementAndGet();
            req.toWebSocket().onSuccess(ws -> watches.open(request, new SocketSink(ws)));
            return;
        }
        chunkedWatches.incrementAndGet();
        watches.open(request, new ChunkedSink(req.response()));
    }

    private static RecordedRequest recorded(HttpServerRequest req, Buffer body) {
        return new RecordedRequest(req.version().alpnName().toUpperCase(Locale.ROOT), HttpMethod.fromVertx(req.method()),
                req.uri(), Headers.builder().addAll(req.headers()).build(),
                new io.fabric8.mockwebserver.http.Buffer(body == null ? null : body.getBytes()));
    }

    /** Writes a stored-object answer; an error without a body gets a Status, as the real server sends. */
    private static void respond(HttpServerResponse out, MockResponse m) {
        out.setStatusCode(m.code());
        m.getHeaders().toMultimap().forEach((k, vs) -> out.headers().add(k, vs));
        byte[] body = m.getBody() == null ? new byte[0] : m.getBody().getBytes();
        if (body.length == 0 && m.code() >= 400) {
            body = WatchEvents.status(m.code(), m.code() == 404 ? "NotFound" : "InternalError",
                    "HTTP " + m.code()).getBytes(StandardCharsets.UTF_8);
        }
        if (body.length > 0 && !out.headers().contains("Content-Type")) {
            out.putHeader("Content-Type", "application/json");
        }
        out.end(Buffer.buffer(body));
    }

    private static MockResponse failure(int code, String reason, String message) {
        return new MockResponse().setResponseCode(code).setBody(WatchEvents.status(code, reason, message));
    }

    private static <T> T await(Future<T> f, String what) {
        try {
            return f.toCompletionStage().toCompletableFuture().get(WITHIN_SECONDS, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted: " + what, e);
        } catch (Exception e) {
            throw new IllegalStateException("mock API server could not " + what + ": " + e, e);
        }
    }

    /** A watch as a chunked JSON stream: one event per line, {@code Content-Type: application/json}. */
    private static final class ChunkedSink implements WatchSink {
        private final HttpServerResponse response;
        private volatile boolean open = true;

        ChunkedSink(HttpServerResponse response) {
            this.response = response;
            response.setStatusCode(200).setChunked(true).putHeader("Content-Type", "application/json")
                    .putHeader("Cache-Control", "no-cache, private");
            response.closeHandler(v -> open = false);
            response.exceptionHandler(e -> open = false);
            response.writeHead();
        }

        @Override
        public void send(String event) {
            try {
                response.write(event + "\n");
            } catch (IllegalStateException closed) {
                open = false;
            }
        }

        @Override
        public void end() {
            open = false;
            try {
                response.end();
            } catch (IllegalStateException closed) {
                // the client went away first
            }
        }

        @Override
        public boolean open() {
            return open && !response.closed();
        }
    }

    /** A watch over a WebSocket: one text message per event. */
    private static final class SocketSink implements WatchSink {
        private final ServerWebSocket ws;
        private volatile boolean open = true;

        SocketSink(ServerWebSocket ws) {
            this.ws = ws;
            ws.closeHandler(v -> open = false);
            ws.exceptionHandler(e -> open = false);
        }

        @Override
        public void send(String event) {
            try {
                ws.writeTextMessage(event);
            } catch (IllegalStateException closed) {
                open = false;
            }
        }

        @Override
        public void end() {
            open = false;
            try {
                ws.close();
            } catch (IllegalStateException closed) {
                // the client went away first
            }
        }

        @Override
        public boolean open() {
            return open && !ws.isClosed();
        }
    }
}
