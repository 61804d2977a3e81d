package org.jflannel.testsupport.etcd;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A real single-member {@code etcd} on loopback, for tests: free ports, a temporary data directory,
 * started and awaited healthy within a bound. It can be stopped and restarted on the same ports and
 * data (fault tests). {@link #close()} kills it by PID and deletes the data directory.
 *
 * <p>Owns: one etcd child process, its data directory and log file.
 */
public final class EtcdProcess implements AutoCloseable {
    public static final Path BINARY = Path.of(System.getProperty("jflannel.etcd.binary", "/usr/bin/etcd"));
    private static final Logger LOG = LoggerFactory.getLogger(EtcdProcess.class);
    private static final Duration HEALTHY_WITHIN = Duration.ofSeconds(30);
    private static final Duration STOP_WITHIN = Duration.ofSeconds(10);
    private static final int START_ATTEMPTS = 3;

    /** Server certificate, key and the CA that signs client certificates (PEM files); clients must present one. */
    public record Tls(Path cert, Path key, Path ca) {}

    private final Path dir;
    private final Tls tls;
    private final int clientPort;
    private final int peerPort;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
    private Process process;
    /** Kills etcd by PID should the JVM exit without {@link #close()} (a crashed or killed test run). */
    private final Thread killOnExit = new Thread(this::killNow, "etcd-kill-on-exit");

    private EtcdProcess(Path dir, Tls tls, int clientPort, int peerPort) {
        this.dir = dir;
        this.tls = tls;
        this.clientPort = clientPort;
        this.peerPort = peerPort;
    }

    /** Starts etcd on two free loopback ports and waits until {@code /health} says true. */
    public static EtcdProcess start() throws IOException, InterruptedException {
        return start(null);
    }

    /**
     * As {@link #start()}, serving clients over TLS with client-certificate authentication when
     * {@code tls} is given; health is then checked with {@code etcdctl} and the given CA.
     */
    public static EtcdProcess start(Tls tls) throws IOException, InterruptedException {
        if (!Files.isExecutable(BINARY)) {
            throw new IllegalStateException("etcd binary not found or not executable: " + BINARY
                    + " (Debian package etcd-server)");
        }
        for (int attempt = 1; ; attempt++) {
            Path dir = Files.createTempDirectory("jflannel-etcd-");
            int[] ports = freePorts();
            EtcdProcess etcd = new EtcdProcess(dir, tls, ports[0], ports[1]);
            Runtime.getRuntime().addShutdownHook(etcd.killOnExit);
            try {
                etcd.startProcess();
                return etcd;
            } catch (IOException e) {
                etcd.close();
                // a port found free can be taken before etcd binds it (another process's outgoing connection):
                // fresh ports and a fresh data directory, a bounded number of times
                if (attempt < START_ATTEMPTS && String.valueOf(e.getMessage()).contains("address already in use")) {
                    LOG.warn("etcd could not bind its ports, trying others attempt={} ports={}", attempt,
                            java.util.Arrays.toString(ports));
                    continue;
                }
                throw e;
            } catch (RuntimeException | InterruptedException e) {
                etcd.close();
                throw e;
            }
        }
    }

    /** The client URL, e.g. {@code http://127.0.0.1:40123}. */
    public String endpoint() {
        return (tls == null ? "http" : "https") + "://127.0.0.1:" + clientPort;
    }

    public List<String> endpoints() {
        return List.of(endpoint());
    }

    public int clientPort() {
        return clientPort;
    }

    /** PID of the running etcd, or -1 when stopped. */
    public synchronized long pid() {
        return process != null && process.isAlive() ? process.pid() : -1;
    }

    public synchronized boolean isRunning() {
        return process != null && process.isAlive();
    }

    /** Stops etcd (SIGTERM, then SIGKILL after a bound); data and ports are kept for {@link #restart()}. */
    public synchronized void stop() throws InterruptedException {
        if (process == null) {
            return;
        }
        process.destroy();
        if (!process.waitFor(STOP_WITHIN.toMillis(), TimeUnit.MILLISECONDS)) {
            process.destroyForcibly();
            process.waitFor(STOP_WITHIN.toMillis(), TimeUnit.MILLISECONDS);
        }
        LOG.info("etcd stopped pid={} port={}", process.pid(), clientPort);
        process = null;
    }

    /** Starts etcd again on the same ports with the same data, and waits until it is healthy. */
    public synchronized void restart() throws IOException, InterruptedException {
        if (isRunning()) {
            throw new IllegalStateException("etcd is still running on port " + clientPort);
        }
        startProcess();
    }

    private synchronized void startProcess() throws IOException, InterruptedException {
        String peer = "http://127.0.0.1:" + peerPort;
        List<String> cmd = new ArrayList<>(List.of(BINARY.toString(),
                "--name", "jf",
                "--data-dir", dir.resolve("data").toString(),
                "--listen-client-urls", endpoint(),
                "--advertise-client-urls", endpoint(),
                "--listen-peer-urls", peer,
                "--initial-advertise-peer-urls", peer,
                "--initial-cluster", "jf=" + peer,
                "--logger", "zap",
                "--log-level", "warn"));
        if (tls != null) {
            cmd.addAll(List.of("--cert-file", tls.cert().toString(), "--key-file", tls.key().toString(),
                    "--trusted-ca-file", tls.ca().toString(), "--client-cert-auth"));
        }
        ProcessBuilder pb = new ProcessBuilder(cmd)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(dir.resolve("etcd.log").toFile()));
        process = pb.start();
        LOG.info("etcd started pid={} endpoint={} dir={}", process.pid(), endpoint(), dir);
        awaitHealthy();
    }

    private void awaitHealthy() throws IOException, InterruptedException {
        long deadline = System.nanoTime() + HEALTHY_WITHIN.toNanos();
        HttpRequest req = HttpRequest.newBuilder(URI.create(endpoint() + "/health"))
                .timeout(Duration.ofSeconds(1)).build();
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                throw new IOException("etcd exited with " + process.exitValue() + " before it was healthy; log: " + logTail());
            }
            if (tls != null ? healthyByEtcdctl() : healthyByHttp(req)) {
                return;
            }
            TimeUnit.MILLISECONDS.sleep(50);
        }
        throw new IOException("etcd not healthy within " + HEALTHY_WITHIN + " on " + endpoint() + "; log: " + logTail());
    }

    private boolean healthyByHttp(HttpRequest req) throws InterruptedException {
        try {
            HttpResponse<String> resp = http.send(req, HttpResponse.BodyHandlers.ofString());
            return resp.statusCode() == 200 && resp.body().contains("\"true\"");
        } catch (IOException notYet) {
            return false; // not listening yet; poll again
        }
    }

    /** With client-certificate authentication even /health wants a certificate: ask etcdctl, as the server's CA. */
    private boolean healthyByEtcdctl() throws IOException, InterruptedException {
        Process p = new ProcessBuilder("etcdctl", "--endpoints", endpoint(), "--cacert", tls.ca().toString(),
                "--cert", tls.cert().toString(), "--key", tls.key().toString(), "--command-timeout", "1s",
                "endpoint", "health").redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        if (!p.waitFor(5, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            return false;
        }
        return p.exitValue() == 0;
    }

    private String logTail() {
        try {
            List<String> lines = Files.readAllLines(dir.resolve("etcd.log"));
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 20), lines.size()));
        } catch (IOException e) {
            return "(no log: " + e.getMessage() + ")";
        }
    }

    /** A client and a peer port, free now and distinct (both held while the second is picked). */
    private static int[] freePorts() throws IOException {
        try (ServerSocket client = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
             ServerSocket peer = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return new int[] {client.getLocalPort(), peer.getLocalPort()};
        }
    }

    /** Kills etcd by PID (no grace) and deletes its data directory. */
    @Override
    public synchronized void close() {
        killNow();
        try {
            Runtime.getRuntime().removeShutdownHook(killOnExit);
        } catch (IllegalStateException shuttingDown) {
            // the hook is running or has run; nothing to remove
        }
        deleteTree(dir);
    }

    private synchronized void killNow() {
        if (process != null) {
            process.destroyForcibly();
            try {
                process.waitFor(STOP_WITHIN.toMillis(), TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            process = null;
        }
    }

    private static void deleteTree(Path dir) {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            s.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        } catch (IOException e) {
            throw new UncheckedIOException("cannot delete " + dir, e);
        }
    }
}
