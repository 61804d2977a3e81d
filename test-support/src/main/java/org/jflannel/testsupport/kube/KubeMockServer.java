package org.jflannel.testsupport.kube;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.vertx.core.Vertx;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * A Kubernetes API server stand-in over plain HTTP: fabric8's CRUD store with
 * {@link NodeAwareCrudDispatcher} (strategic merge patch, {@code /status}), watches served as a real
 * API server serves them ({@link WatchHub}: chunked JSON or WebSocket, resourceVersion, bookmarks,
 * 410 Gone, timeoutSeconds) and discovery, so both fabric8 and Go clients (client-go, kubectl) work
 * against it. Used in-process by tests ({@link #start()}) and as a separate process by the end-to-end
 * tests ({@link #main(String[])}). Fault injection: failed requests ({@link #failNext}), an outage
 * ({@link #stopServing()}/{@link #resumeServing()}), watches held back or expired.
 */
public final class KubeMockServer implements AutoCloseable {

    /** Bookmarks on watches that allow them: the real server sends one about every minute. */
    public static final Duration BOOKMARK_EVERY = Duration.ofSeconds(30);

    private final Vertx vertx = Vertx.vertx();
    private final NodeAwareCrudDispatcher dispatcher = new NodeAwareCrudDispatcher();
    private final WatchHub watches;
    private final ApiHttpServer http;
    /** A second front on the same store, on loopback, that an outage leaves up: another API server replica. */
    private final ApiHttpServer admin;
    private final InetAddress host;

    private KubeMockServer(InetAddress host, Duration bookmarkEvery) {
        this.host = host;
        this.watches = new WatchHub(dispatcher, bookmarkEvery);
        this.http = new ApiHttpServer(vertx, dispatcher, watches, host);
        this.admin = new ApiHttpServer(vertx, dispatcher, watches, InetAddress.getLoopbackAddress());
    }

    /** Starts a server on a free loopback port. */
    public static KubeMockServer start() {
        return start(0);
    }

    /** Starts a server on loopback, {@code port} 0 meaning a free one. */
    public static KubeMockServer start(int port) {
        return start(InetAddress.getLoopbackAddress(), port, BOOKMARK_EVERY);
    }

    /** Starts a server on {@code host}:{@code port} (0: a free one) with bookmarks every {@code bookmarkEvery}. */
    public static KubeMockServer start(InetAddress host, int port, Duration bookmarkEvery) {
        KubeMockServer s = new KubeMockServer(host, bookmarkEvery);
        try {
            s.http.listen(port);
            s.admin.listen(0);
        } catch (RuntimeException e) {
            s.close();
            throw e;
        }
        return s;
    }

    /** The API server URL, e.g. {@code http://127.0.0.1:41234}. */
    public String url() {
        return "http://" + host.getHostAddress() + ":" + http.port();
    }

    public int port() {
        return http.port();
    }

    /**
     * The URL of a second front on the same store (loopback, free port) that {@link #stopServing()}
     * leaves up, so a test can change Nodes during an outage as another API server replica would.
     */
    public String adminUrl() {
        return "http://" + InetAddress.getLoopbackAddress().getHostAddress() + ":" + admin.port();
    }

    /** A new client for this server (JDK HTTP client, namespace {@code test}); the caller closes it. */
    public KubernetesClient newClient() {
        return newClient(b -> { });
    }

    /** A new client for this server, its builder adjusted by {@code customizer} first; the caller closes it. */
    public KubernetesClient newClient(Consumer<KubernetesClientBuilder> customizer) {
        Config config = new ConfigBuilder(Config.empty()).withMasterUrl(url()).withNamespace("test")
                .withTrustCerts(true).build();
        KubernetesClientBuilder builder = new KubernetesClientBuilder().withConfig(config);
        customizer.accept(builder);
        return builder.build();
    }

    /** Fault injection: the next {@code times} {@code method} requests under {@code pathPrefix} fail with HTTP {@code code}. */
    public void failNext(String method, String pathPrefix, int times, int code) {
        dispatcher.failNext(method, pathPrefix, times, code);
    }

    /** Outage: stops listening and drops every connection; the stored objects stay. */
    public void stopServing() {
        http.stop();
    }

    /** Ends an outage: listens on the same port again. */
    public void resumeServing() {
        http.listen(0);
    }

    public boolean serving() {
        return http.listening();
    }

    /** While held, open watches receive no changes (their clients fall behind); false lets them catch up. */
    public void holdWatches(boolean on) {
        watches.hold(on);
    }

    /**
     * Compacts the history and answers every open watch {@code 410 Gone} (an ERROR event), as a real
     * server does when a watcher fell too far behind: its client must list again. Changes held back
     * from those watches are never sent on them.
     */
    public void expireWatches() {
        watches.expireAll();
    }

    /** Watches open right now (on either front). */
    public int openWatches() {
        return watches.openCount();
    }

    /** How many watches were served as a chunked HTTP stream and how many over a WebSocket. */
    public record WatchTransports(int chunked, int websocket) {
    }

    public WatchTransports watchTransports() {
        return http.transports();
    }

    /** Every request received so far, in order. */
    public List<ApiCall> calls() {
        return dispatcher.calls();
    }

    public void clearCalls() {
        dispatcher.clearCalls();
    }

    /** Writes a kubeconfig naming this server (no credentials) to {@code file}; returns it. */
    public Path writeKubeconfig(Path file) throws IOException {
        return KubeconfigWriter.write(file, url());
    }

    @Override
    public void close() {
        try {
            http.stop();
            admin.stop();
            watches.close();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } finally {
            try {
                vertx.close().toCompletionStage().toCompletableFuture().get(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (Exception e) {
                System.err.println("kube mock: vert.x did not close: " + e);
            }
        }
    }

    /**
     * Runs the server as a process: {@code KubeMockServer [port] [kubeconfig-path]}. Prints
     * {@code url=<url>} (and {@code kubeconfig=<path>}) on stdout, then serves until stdin reaches
     * end-of-file or the process is terminated.
     */
    public static void main(String[] args) throws IOException {
        int port = args.length > 0 ? Integer.parseInt(args[0]) : 0;
        PrintStream out = System.out;
        try (KubeMockServer s = start(port)) {
            out.println("url=" + s.url());
            if (args.length > 1) {
                out.println("kubeconfig=" + s.writeKubeconfig(Path.of(args[1])));
            }
            out.flush();
            InputStream in = System.in;
            byte[] sink = new byte[256];
            while (in.read(sink) >= 0) {
                // serve until the parent closes our stdin
            }
        }
    }
}
