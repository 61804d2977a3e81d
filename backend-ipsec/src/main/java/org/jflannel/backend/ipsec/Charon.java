package org.jflannel.backend.ipsec;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jflannel.backend.ipsec.vici.ViciClient;
import org.jflannel.backend.ipsec.vici.ViciMessage;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * charon as our child: started with our {@code strongswan.conf}, waited for until its VICI socket
 * answers {@code version}, restarted when it dies (with the shared keys and connections we loaded
 * replayed into the new one), ended on {@link #close()} by its PID (SIGTERM, then SIGKILL). Owns the
 * process, its conf file, its VICI socket (charon leaves it behind; removed before a start and after the
 * end) and one thread, {@code ipsec-charon}, that watches it (its output goes through {@link CharonOutput}).
 * What flanneld asked charon to hold is remembered here, so a restarted charon is told the same. A charon
 * that cannot start is reported with its exit status and last output and tried again with back-off
 * (0.5 s doubling to 30 s), never in a busy loop; meanwhile VICI calls fail and what they asked is kept for
 * the next start. A charon an earlier flanneld left running is ended first ({@link StaleCharon}). Thread-safe.
 */
public final class Charon implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(Charon.class);
    private static final Duration VICI_TIMEOUT = Duration.ofSeconds(10);
    private static final Duration STOP_GRACE = Duration.ofSeconds(5);
    private static final Duration FIRST_BACKOFF = Duration.ofMillis(500);
    private static final Duration MAX_BACKOFF = Duration.ofSeconds(30);
    private static final int FAILURES_KEPT = 16;

    /**
     * How to run charon: {@code command} is its argv (a wrapper may come first, as the tests' {@code ip netns exec}),
     * {@code conf} where our strongswan.conf goes, {@code vici} its socket, {@code startTimeout} how long a start
     * may take, {@code log} a file for its output (null: flanneld's own stderr, as upstream). {@code charonConf} and
     * {@code charonVici} are the same two files as charon sees them (null: the same paths), for a wrapper that
     * mounts our directory on charon's /run. {@code pidFile} is charon's pidfile as we see it (null: not checked),
     * where a charon left by an earlier flanneld is found.
     */
    public record Settings(List<String> command, Path conf, Path vici, Duration startTimeout, Path log,
                           Path charonConf, Path charonVici, Path pidFile) {
        public Settings {
            command = List.copyOf(command);
            if (command.isEmpty()) {
                throw new IllegalArgumentException("charon command: empty");
            }
            charonConf = charonConf == null ? conf : charonConf;
            charonVici = charonVici == null ? vici : charonVici;
        }

        public Settings(List<String> command, Path conf, Path vici, Duration startTimeout, Path log) {
            this(command, conf, vici, startTimeout, log, null, null, null);
        }
    }

    /** A restart that failed: why (charon's exit status and last output, or the VICI timeout) and the pause before the next. */
    public record Failure(String message, Duration nextTry) {
    }

    private final Settings settings;
    private final Map<String, Shared> shared = new LinkedHashMap<>();
    private final Map<String, ViciMessage> conns = new LinkedHashMap<>();
    private final Thread watcher;
    private final java.util.ArrayDeque<Failure> failures = new java.util.ArrayDeque<>();
    private Process process;
    private CharonOutput output;
    private boolean closed;
    private int starts;

    private record Shared(String psk, List<String> owners) {
    }

    private Charon(Settings settings) {
        this.settings = settings;
        this.watcher = new Thread(this::watch, "ipsec-charon");
        this.watcher.setDaemon(true);
    }

    /** Writes the conf, starts charon and waits until VICI answers; an IOException when it does not in time. */
    public static Charon start(Settings settings) throws IOException, InterruptedException {
        Charon c = new Charon(settings);
        try {
            synchronized (c) {
                c.launch();
            }
        } catch (IOException | InterruptedException | RuntimeException e) {
            c.close();
            throw e;
        }
        c.watcher.start();
        return c;
    }

    /** The running charon's PID (changes when it is restarted). */
    public synchronized long pid() {
        return process.pid();
    }

    /** How many times charon was started (1 until it is restarted). */
    public synchronized int starts() {
        return starts;
    }

    /** The last restarts that failed (at most 16), oldest first. */
    public synchronized List<Failure> failures() {
        return List.copyOf(failures);
    }

    /** Loads an IKE PSK for {@code owners} (remembered for restarts). The PSK never reaches a log. */
    public synchronized void loadShared(String psk, List<String> owners) throws IOException {
        shared.put(String.join(",", owners), new Shared(psk, List.copyOf(owners)));
        vici(v -> {
            v.loadSharedIke(psk, owners);
            return null;
        });
        LOG.info("ipsec shared key loaded owners={}", owners);
    }

    /** Loads (or replaces) connection {@code name} (remembered for restarts). */
    public synchronized void loadConn(String name, ViciMessage conn) throws IOException {
        conns.put(name, conn);
        vici(v -> {
            v.loadConn(name, conn);
            return null;
        });
        LOG.info("ipsec connection loaded name={}", name);
    }

    /** Unloads connection {@code name} and ends its SAs (forgotten for restarts). */
    public synchronized void unloadConn(String name) throws IOException {
        conns.remove(name);
        vici(v -> {
            v.unloadConn(name);
            v.terminateIke(name);
            return null;
        });
        LOG.info("ipsec connection unloaded name={}", name);
    }

    /** Runs {@code call} on a fresh VICI connection to the running charon. */
    public synchronized <T> T vici(ViciCall<T> call) throws IOException {
        try (ViciClient v = ViciClient.connect(settings.vici(), VICI_TIMEOUT)) {
            return call.apply(v);
        }
    }

    @FunctionalInterface
    public interface ViciCall<T> {
        T apply(ViciClient v) throws IOException;
    }

    private void launch() throws IOException, InterruptedException {
        Files.createDirectories(settings.conf().toAbsolutePath().getParent());
        Files.writeString(settings.conf(), CharonConf.strongswanConf(settings.charonVici()));
        StaleCharon.end(settings.pidFile(), settings.charonConf(), STOP_GRACE); // before its socket goes: it may be listening
        Files.deleteIfExists(settings.vici()); // charon leaves its socket behind when it ends
        ProcessBuilder pb = new ProcessBuilder(settings.command());
        pb.environment().put("STRONGSWAN_CONF", settings.charonConf().toString());
        pb.redirectErrorStream(true);
        pb.redirectOutput(ProcessBuilder.Redirect.PIPE);
        pb.redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")));
        process = pb.start();
        output = CharonOutput.of(process, settings.log());
        starts++;
        LOG.info("charon started pid={} vici={} start={}", process.pid(), settings.vici(), starts);
        awaitVici();
    }

    /** Bounded: until {@code version} answers, charon exits, or the start timeout passes. */
    private void awaitVici() throws IOException, InterruptedException {
        long deadline = System.nanoTime() + settings.startTimeout().toNanos();
        IOException last = null;
        while (System.nanoTime() < deadline) {
            if (!process.isAlive()) {
                output.awaitEnd(Duration.ofSeconds(2));
                throw new IOException("charon pid=" + process.pid() + " exited with " + process.exitValue()
                        + " before its VICI socket " + settings.vici() + " answered; its last output: " + output.tailText());
            }
            try (ViciClient v = ViciClient.connect(settings.vici(), VICI_TIMEOUT)) {
                ViciMessage version = v.version();
                LOG.info("charon ready pid={} version={}", process.pid(), version.value("version"));
                return;
            } catch (IOException e) {
                last = e;
            }
            wait(50); // releases the lock; close() notifies
            if (closed) {
                throw new IOException("charon: closed while starting");
            }
        }
        throw new IOException("charon pid=" + process.pid() + ": VICI socket " + settings.vici() + " did not answer within "
                + settings.startTimeout() + (last == null ? "" : ": " + last.getMessage()));
    }

    /** The watcher: on an unexpected exit, start again (backing off while starts fail) and replay the state. */
    private void watch() {
        while (true) {
            Process p;
            CharonOutput out;
            synchronized (this) {
                if (closed) {
                    return;
                }
                p = process;
                out = output;
            }
            try {
                int code = p.waitFor();
                out.awaitEnd(Duration.ofSeconds(2));
                synchronized (this) {
                    if (closed) {
                        return;
                    }
                    LOG.warn("charon exited pid={} code={} lastOutput={}: restarting", p.pid(), code, out.tailText());
                    restart();
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    /** Starts charon again until it runs and took the replay, pausing 0.5 s, 1 s, 2 s … 30 s after each failure. */
    private void restart() throws InterruptedException {
        Duration backoff = FIRST_BACKOFF;
        while (!closed) {
            try {
                stopQuietly(process); // one that did not answer in time
                launch();
                replay();
                return;
            } catch (IOException e) {
                if (failures.size() == FAILURES_KEPT) {
                    failures.removeFirst();
                }
                failures.addLast(new Failure(e.getMessage(), backoff));
                LOG.error("charon restart failed: {}; next try in {}", e.getMessage(), backoff);
                wait(backoff.toMillis()); // releases the lock: VICI calls fail meanwhile, close() notifies
                backoff = backoff.multipliedBy(2).compareTo(MAX_BACKOFF) > 0 ? MAX_BACKOFF : backoff.multipliedBy(2);
            }
        }
    }

    private void replay() throws IOException {
        List<String> failed = new ArrayList<>();
        vici(v -> {
            for (Shared s : shared.values()) {
                v.loadSharedIke(s.psk(), s.owners());
            }
            for (Map.Entry<String, ViciMessage> c : conns.entrySet()) {
                try {
                    v.loadConn(c.getKey(), c.getValue());
                } catch (IOException e) { // one bad connection does not keep the others out
                    failed.add(c.getKey() + ": " + e.getMessage());
                }
            }
            return null;
        });
        LOG.info("charon reloaded pid={} sharedKeys={} connections={} failed={}", process.pid(), shared.size(),
                conns.size() - failed.size(), failed);
    }

    private static void stopQuietly(Process p) throws InterruptedException {
        if (p == null || !p.isAlive()) {
            return;
        }
        // SIGTERM to its PID through its handle: Process.destroy() would also close charon's output pipe at once, and
        // what charon writes while it shuts down ("SIGTERM received, shutting down") would be lost to its log
        p.toHandle().destroy();
        if (!p.waitFor(STOP_GRACE.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS)) {
            p.toHandle().destroyForcibly();
            p.waitFor(STOP_GRACE.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
        }
    }

    /** Ends charon (SIGTERM by PID, SIGKILL after 5 s) and the watcher. */
    @Override
    public void close() {
        Process p;
        CharonOutput out;
        synchronized (this) {
            if (closed) {
                return;
            }
            closed = true;
            notifyAll();
            p = process;
            out = output;
        }
        try {
            stopQuietly(p);
            if (out != null) {
                out.awaitEnd(Duration.ofSeconds(2)); // its last lines in its log before close() returns
            }
            if (watcher.isAlive()) {
                watcher.join(STOP_GRACE.toMillis());
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        try {
            Files.deleteIfExists(settings.vici());
        } catch (IOException e) {
            LOG.warn("charon socket not removed path={} error={}", settings.vici(), e.toString());
        }
        if (p != null) {
            LOG.info("charon stopped pid={}", p.pid());
        }
    }
}
