package org.jflannel.cni;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;
import jdk.net.ExtendedSocketOptions;
import jdk.net.UnixDomainPrincipal;

/**
 * The fast path's daemon side (docs/cni-plugin.md, "The fast path"): a unix socket, mode 0600,
 * where the launcher sends a CNI request; the plugin's own code ({@link FlannelPlugin}) runs here,
 * in flanneld's warm JVM, with a {@link RemoteHost}, and the launcher performs its steps. Owns the
 * socket file (bound under a temporary name, chmod 0600, renamed into place; deleted on close), the
 * thread {@code cni-server} that accepts, a pool of threads {@code cni-request-N}, one per request in flight,
 * and the thread {@code cni-deadline} that closes a request's connection after {@link #DEADLINE}.
 * Peers other than uid 0 are refused; at most {@code maxInFlight} requests run at once, any other
 * is told to fall back, each admitted one is told so at once ({@link Wire#ACCEPTED}); a request that does not parse gets a CNI error (code 6).
 */
public final class CniServer implements AutoCloseable {

    public static final Path DEFAULT_SOCKET = Path.of("/run/flannel/cni.sock");
    static final long DEADLINE = TimeUnit.MINUTES.toSeconds(2);

    private final ServerSocketChannel server;
    private final Path socket;
    private final Predicate<Path> servesSubnetFile;
    private final Semaphore inFlight;
    private final Thread acceptor;
    private final ScheduledExecutorService deadlines;
    private final ExecutorService workers;
    private final AtomicLong served = new AtomicLong();
    private final AtomicLong fallbacks = new AtomicLong();
    private final AtomicLong refused = new AtomicLong();
    private final AtomicLong requests = new AtomicLong();
    private volatile boolean closed;

    private CniServer(ServerSocketChannel server, Path socket, Predicate<Path> servesSubnetFile, int maxInFlight) {
        this.server = server;
        this.socket = socket;
        this.servesSubnetFile = servesSubnetFile;
        this.inFlight = new Semaphore(maxInFlight);
        this.deadlines = Executors.newSingleThreadScheduledExecutor(r -> daemon(new Thread(r, "cni-deadline")));
        // at most maxInFlight threads (the semaphore); idle ones end after a minute
        this.workers = new ThreadPoolExecutor(0, Integer.MAX_VALUE, 60, TimeUnit.SECONDS, new SynchronousQueue<>(),
            r -> daemon(new Thread(r, "cni-request-" + requests.incrementAndGet())));
        this.acceptor = new Thread(this::acceptLoop, "cni-server");
        this.acceptor.setDaemon(true);
    }

    /** Binds {@code socket} (replacing a stale one) and serves requests for {@code subnetFile}. */
    public static CniServer start(Path socket, Path subnetFile, int maxInFlight) throws IOException {
        Path served = subnetFile.toAbsolutePath();
        return start(socket, p -> p.toAbsolutePath().equals(served), maxInFlight);
    }

    /** The tests' server: it serves the subnet files {@code servesSubnetFile} accepts. */
    static CniServer start(Path socket, Predicate<Path> servesSubnetFile, int maxInFlight) throws IOException {
        Path dir = socket.toAbsolutePath().getParent();
        Files.createDirectories(dir);
        Path tmp = dir.resolve("." + socket.getFileName() + "." + ProcessHandle.current().pid() + ".tmp");
        Files.deleteIfExists(tmp);
        ServerSocketChannel ch = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        try {
            ch.bind(UnixDomainSocketAddress.of(tmp), 256);
            Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rw-------"));
            Files.move(tmp, socket, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            ch.close();
            Files.deleteIfExists(tmp);
            throw e;
        }
        CniServer s = new CniServer(ch, socket, servesSubnetFile, maxInFlight);
        s.acceptor.start();
        return s;
    }

    /**
     * Serves alone, as flanneld would (bench/cni-latency.sh, variant F): {@code java -cp cni-flannel.jar
     * org.jflannel.cni.CniServer SOCKET SUBNET_FILE}; runs until killed.
     */
    public static void main(String[] args) throws IOException, InterruptedException {
        if (args.length != 2) {
            System.err.println("usage: CniServer SOCKET SUBNET_FILE");
            System.exit(2);
        }
        CniServer s = start(Path.of(args[0]), Path.of(args[1]), 128);
        if (!"0".equals(System.getenv("JFLANNEL_CNI_WARM_UP"))) { // as flanneld does
            s.warmUp(Path.of(args[1]), WARM_UP_PODS, (ms, ok) -> System.err.println("cni-server warmed up calls=" + ok + " ms=" + ms)).join();
        }
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            System.err.println("cni-server served=" + s.served() + " fallbacks=" + s.fallbacks() + " refused=" + s.refused());
            s.close();
        }, "cni-server-stop"));
        Thread.currentThread().join();
    }

    /** Requests answered with a result or an error (DONE), told to fall back, refused (peer not root). */
    public long served() {
        return served.get();
    }

    public long fallbacks() {
        return fallbacks.get();
    }

    public long refused() {
        return refused.get();
    }

    private void acceptLoop() {
        while (!closed) {
            SocketChannel c;
            try {
                c = server.accept();
            } catch (ClosedChannelException e) {
                return;
            } catch (IOException e) {
                if (closed) {
                    return;
                }
                System.getLogger("org.jflannel.cni").log(System.Logger.Level.WARNING, "cni-server accept failed: " + e);
                continue;
            }
            if (!admit(c)) {
                continue;
            }
            workers.execute(() -> {
                try {
                    serve(c);
                } finally {
                    inFlight.release();
                }
            });
        }
    }

    /**
     * On the accepting thread, so the launcher hears within its first bound even while every worker is
     * busy: a peer that is not root is hung up on, a request beyond the bound told to fall back, any
     * other told it is accepted (then the launcher waits longer, as a request may wait for the CPU).
     */
    private boolean admit(SocketChannel c) {
        try {
            if (!fromRoot(c)) {
                refused.incrementAndGet();
                c.close();
                return false;
            }
            if (!inFlight.tryAcquire()) {
                try (c) {
                    fallback(Channels.newOutputStream(c), true); // a few bytes into a fresh socket's buffer: no wait
                }
                return false;
            }
            try {
                new Wire.Builder(Wire.ACCEPTED).writeTo(Channels.newOutputStream(c));
            } catch (IOException e) {
                inFlight.release();
                throw e;
            }
            return true;
        } catch (IOException e) {
            closeQuietly(c);
            return false;
        }
    }

    private void serve(SocketChannel c) {
        ScheduledFuture<?> deadline = deadlines.schedule(() -> closeQuietly(c), DEADLINE, TimeUnit.SECONDS);
        try (c) {
            answer(Channels.newInputStream(c), Channels.newOutputStream(c), true);
        } catch (IOException | UncheckedIOException e) {
            // the launcher went away or broke the protocol mid-request: it runs its own JVM
        } finally {
            deadline.cancel(false);
        }
    }

    /**
     * Warms the request path up: {@code pods} ADDs and DELs played through it in memory ({@link Rehearsal}),
     * not counted as requests; returns how many of the 2 × pods calls succeeded.
     */
    public int rehearse(Path subnetFile, int pods) {
        return new Rehearsal(this, subnetFile).play(pods);
    }

    /** Pods the daemon rehearses at start: enough for C1 to compile the request path (about 200 calls a method). */
    public static final int WARM_UP_PODS = 250;

    /** {@link #rehearse} on a daemon thread of its own, {@code cni-warm-up}; {@code done} gets the calls that succeeded and the milliseconds taken. */
    public Thread warmUp(Path subnetFile, int pods, java.util.function.ObjIntConsumer<Long> done) {
        Thread t = new Thread(() -> {
            long t0 = System.nanoTime();
            int ok = rehearse(subnetFile, pods);
            done.accept(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0), ok);
        }, "cni-warm-up");
        t.setDaemon(true);
        t.start();
        return t;
    }

    /** One request on {@code in}/{@code out}, answered; {@code counted}: in {@link #served()} and {@link #fallbacks()} (before the answer goes). */
    void answer(InputStream in, OutputStream out, boolean counted) throws IOException {
        Wire.Frame q;
        Map<String, String> env = new HashMap<>();
        byte[] stdin;
        boolean ownNetns;
        RemoteHost.Prefetched prefetched;
        try {
            q = Wire.read(in, Wire.MAX_REQUEST);
            if (q.version() != Wire.VERSION) {
                fallback(out, counted); // another version's launcher: its own JVM serves it
                return;
            }
            if (q.type() != Wire.REQUEST) {
                throw new Wire.MalformedException("expected a request, got type " + q.type());
            }
            ownNetns = q.u8() == 1;
            int n = q.i32();
            if (n < 0 || n > Wire.MAX_ENV) {
                throw new Wire.MalformedException("environment of " + n + " variables");
            }
            for (int i = 0; i < n; i++) {
                String kv = q.string();
                int eq = kv.indexOf('=');
                if (eq <= 0) {
                    throw new Wire.MalformedException("environment entry without '='");
                }
                env.putIfAbsent(kv.substring(0, eq), kv.substring(eq + 1)); // getenv takes the first
            }
            stdin = q.bytes();
            prefetched = new RemoteHost.Prefetched(q.u8(), q.i32(), q.bytes());
            q.end();
        } catch (EOFException e) {
            return;
        } catch (Wire.MalformedException e) {
            done(out, counted, List.of(), 1, new CniException(CniException.DECODING_FAILURE, "fast path: malformed request: " + e.getMessage())
                .toJson(Protocol.LATEST), new byte[0]);
            return;
        }
        ByteArrayOutputStream stdout = new ByteArrayOutputStream();
        ByteArrayOutputStream stderr = new ByteArrayOutputStream();
        RemoteHost host = new RemoteHost(in, out, servesSubnetFile, env, ownNetns, prefetched);
        int exit;
        try {
            exit = new FlannelPlugin(env, new ByteArrayInputStream(stdin), new PrintStream(stdout, false, StandardCharsets.UTF_8),
                new PrintStream(stderr, false, StandardCharsets.UTF_8), host).run();
        } catch (Host.Fallback f) {
            fallback(out, counted);
            return;
        }
        done(out, counted, host.takeFinalSteps(), exit, stdout.toByteArray(), stderr.toByteArray());
        }

    /** The result, after the steps whose outcome changes nothing (the launcher performs them, then prints). */
    private void done(OutputStream out, boolean counted, List<Wire.Builder> steps, int exit, byte[] stdout, byte[] stderr) throws IOException {
        if (counted) {
            served.incrementAndGet(); // before the answer: the launcher may have exited when this returns
        }
        Wire.Builder d = new Wire.Builder(Wire.DONE).u8(steps.size());
        for (Wire.Builder s : steps) {
            d.raw(s);
        }
        d.u8(exit).bytes(stdout).bytes(stderr).writeTo(out);
    }

    private void fallback(OutputStream out, boolean counted) throws IOException {
        if (counted) {
            fallbacks.incrementAndGet();
        }
        new Wire.Builder(Wire.FALLBACK).writeTo(out);
    }

    /** SO_PEERCRED: the peer's uid, as the JDK names it ("root", or the number without a passwd entry). */
    private static boolean fromRoot(SocketChannel c) throws IOException {
        UnixDomainPrincipal p = c.getOption(ExtendedSocketOptions.SO_PEERCRED);
        String user = p.user().getName();
        return user.equals("root") || user.equals("0");
    }

    private static Thread daemon(Thread t) {
        t.setDaemon(true);
        return t;
    }

    private static void closeQuietly(SocketChannel c) {
        try {
            c.close();
        } catch (IOException e) {
            // closing
        }
    }

    @Override
    public void close() {
        closed = true;
        try {
            server.close();
        } catch (IOException e) {
            // closing
        }
        try {
            acceptor.join(TimeUnit.SECONDS.toMillis(5));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        workers.shutdown();
        deadlines.shutdownNow();
        try {
            Files.deleteIfExists(socket);
        } catch (IOException e) {
            // the next start replaces it
        }
    }
}
