package org.jflannel.testsupport.kube;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;

/**
 * fabric8's Kubernetes mock API server in CRUD mode with {@link NodeAwareCrudDispatcher}, on loopback
 * over plain HTTP. Used in-process by tests ({@link #start()}) and as a separate process by the
 * end-to-end tests ({@link #main(String[])}).
 */
public final class KubeMockServer implements AutoCloseable {

    private final NodeAwareCrudDispatcher dispatcher = new NodeAwareCrudDispatcher();
    private final KubernetesMockServer server;

    private KubeMockServer() {
        server = new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(), dispatcher, false);
    }

    /** Starts a server on a free loopback port. */
    public static KubeMockServer start() {
        return start(0);
    }

    /** Starts a server on loopback, {@code port} 0 meaning a free one. */
    public static KubeMockServer start(int port) {
        KubeMockServer s = new KubeMockServer();
        s.server.init(InetAddress.getLoopbackAddress(), port);
        return s;
    }

    /** The API server URL, e.g. {@code http://127.0.0.1:41234}. */
    public String url() {
        return "http://" + InetAddress.getLoopbackAddress().getHostAddress() + ":" + server.getPort();
    }

    public int port() {
        return server.getPort();
    }

    /** A new client for this server (JDK HTTP client); the caller closes it. */
    public KubernetesClient newClient() {
        return server.createClient();
    }

    /** A new client for this server, its builder adjusted by {@code customizer} first; the caller closes it. */
    public KubernetesClient newClient(java.util.function.Consumer<io.fabric8.kubernetes.client.KubernetesClientBuilder> customizer) {
        return server.createClient(customizer);
    }

    /** Fault injection: the next {@code times} {@code method} requests under {@code pathPrefix} fail with HTTP {@code code}. */
    public void failNext(String method, String pathPrefix, int times, int code) {
        dispatcher.failNext(method, pathPrefix, times, code);
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
        server.destroy();
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
