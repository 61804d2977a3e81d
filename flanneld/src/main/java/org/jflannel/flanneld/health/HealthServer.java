package org.jflannel.flanneld.health;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code /healthz}, {@code /readyz} (REFERENCE §9.1), {@code /metrics} and {@code /peers} (Ours,
 * issue 12: the peer prober's verdicts as JSON; never part of readiness) on
 * {@code --healthz-ip:--healthz-port}, served by the JDK's HTTP server.
 *
 * <p>Hostile clients (issue 38): the JDK's server reads a request's line and headers on an executor
 * thread, blocking; with one thread, a client that sent half a request line and waited held every later
 * request, the kubelet's liveness probe included, forever. So requests are read on their own threads
 * ({@code healthz-N}, at most {@link #MAX_THREADS}, idle ones end after 10 s; beyond that a connection is
 * closed), a request not read whole within {@link #MAX_REQUEST_SECONDS} s is dropped by the server's timer,
 * and the handlers themselves still run one at a time (the renderers assume it).
 */
public final class HealthServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(HealthServer.class);
    static final int STOP_TIMEOUT_SECONDS = 3;
    static final int MAX_THREADS = 256;
    static final int MAX_REQUEST_SECONDS = 2;
    /**
     * The listen backlog, as Go's listeners take it (somaxconn; the kernel caps it there). The JDK server
     * accepts on one thread, so a burst of connections outruns it for a moment; with a queue of 16 the kernel
     * then dropped the next SYN, and a client's retry comes 1 s later: the kubelet's 1-s probe failed
     * (HostileClientsTest, CI of 2026-12-03).
     */
    static final int BACKLOG = 4096;
    /** The handlers run one at a time, as they did on the single thread. */
    private static final Object HANDLERS = new Object();

    private final HttpServer server;
    private final ExecutorService executor;

    private HealthServer(HttpServer server, ExecutorService executor) {
        this.server = server;
        this.executor = executor;
    }

    /** Binds and starts; {@code ready} turns /readyz to 200 (subnet.env written). Port 0 binds an ephemeral port (tests). */
    public static HealthServer start(InetAddress ip, int port, BooleanSupplier ready, Metrics metrics) throws IOException {
        return start(ip, port, ready, metrics, () -> "{\"probing\":false,\"peers\":[]}");
    }

    /** As above, with {@code peers} rendering the /peers document (called on the healthz thread per request). */
    public static HealthServer start(InetAddress ip, int port, BooleanSupplier ready, Metrics metrics,
                                     Callable<String> peers) throws IOException {
        // read by the JDK's ServerConfig once, when the first server is made; an operator's own setting wins
        if (System.getProperty("sun.net.httpserver.maxReqTime") == null) {
            System.setProperty("sun.net.httpserver.maxReqTime", Integer.toString(MAX_REQUEST_SECONDS));
        }
        HttpServer server = HttpServer.create(new InetSocketAddress(ip, port), BACKLOG);
        server.createContext("/healthz", ex -> reply(ex, "/healthz", 200, "flanneld is running"));
        server.createContext("/readyz", ex -> {
            boolean ok;
            synchronized (HANDLERS) {
                ok = ready.getAsBoolean();
            }
            reply(ex, "/readyz", ok ? 200 : 503, ok ? "flanneld is ready" : "flanneld is not ready yet");
        });
        server.createContext("/metrics", ex -> {
            ByteArrayOutputStream body = new ByteArrayOutputStream(4096);
            synchronized (HANDLERS) {
                metrics.writeText(body);
            }
            send(ex, "/metrics", 200, metrics.contentType(), body.toByteArray());
        });
        server.createContext("/peers", ex -> {
            byte[] body;
            try {
                body = render(peers);
            } catch (Exception e) {
                reply(ex, "/peers", 500, "peers: " + e);
                return;
            }
            send(ex, "/peers", 200, "application/json", body);
        });
        AtomicInteger threads = new AtomicInteger();
        ExecutorService executor = new ThreadPoolExecutor(0, MAX_THREADS, 10, TimeUnit.SECONDS, new SynchronousQueue<>(), r -> {
            Thread t = new Thread(r, "healthz-" + threads.incrementAndGet());
            t.setDaemon(true);
            return t;
        }); // a rejected connection is closed by the server
        server.setExecutor(executor);
        server.start();
        LOG.info("health server listening address={}:{}", ip.getHostAddress(), server.getAddress().getPort());
        return new HealthServer(server, executor);
    }

    /** Serves {@code render}'s JSON at {@code path} from now on (a document of a part started after the server). */
    public void addJson(String path, Callable<String> render) {
        server.createContext(path, ex -> {
            byte[] body;
            try {
                body = render(render);
            } catch (Exception e) {
                reply(ex, path, 500, path + ": " + e);
                return;
            }
            send(ex, path, 200, "application/json", body);
        });
    }

    private static byte[] render(Callable<String> document) throws Exception {
        synchronized (HANDLERS) {
            return document.call().getBytes(StandardCharsets.UTF_8);
        }
    }

    public int port() {
        return server.getAddress().getPort();
    }

    private static void reply(HttpExchange ex, String path, int status, String text) throws IOException {
        send(ex, path, status, "text/plain; charset=utf-8", text.getBytes(StandardCharsets.UTF_8));
    }

    /** Exact paths only, as Go's ServeMux registers them; anything below them is 404. */
    private static void send(HttpExchange ex, String path, int status, String contentType, byte[] body) throws IOException {
        try (ex) {
            if (!ex.getRequestURI().getPath().equals(path)) {
                byte[] nf = "404 page not found\n".getBytes(StandardCharsets.UTF_8);
                ex.getResponseHeaders().set("Content-Type", "text/plain; charset=utf-8");
                ex.sendResponseHeaders(404, nf.length);
                ex.getResponseBody().write(nf);
                return;
            }
            ex.getResponseHeaders().set("Content-Type", contentType);
            ex.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
            try (OutputStream out = ex.getResponseBody()) {
                out.write(body);
            }
        }
    }

    /** Stops accepting, gives running exchanges up to 3 s, then releases the thread. */
    @Override
    public void close() {
        server.stop(STOP_TIMEOUT_SECONDS);
        executor.shutdownNow();
        LOG.info("health server stopped");
    }
}
