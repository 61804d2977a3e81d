package org.jflannel.testsupport.netns;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32;
import org.jflannel.core.LeaseEvent;
import org.jflannel.core.Network;
import org.jflannel.linuxnet.netns.NetNs;
import org.jflannel.testbase.NetnsPrivilege;
import org.jflannel.testsupport.cluster.Cmd;

/**
 * A throwaway node namespace for a backend's integration tests, what the vxlan, host-gw, udp and
 * wireguard test nodes share: a unique name with lo up, iproute2 as the independent witness (every
 * command bounded in time), a lease-events thread that runs tasks inside the namespace as the daemon's
 * does, and a network closed before the namespace is deleted. Each backend's node extends it with what
 * is its own (its underlay, how it registers its network, what it reads back).
 *
 * <p>{@link #close()} closes the attached network, stops the thread and deletes the namespace, also
 * after a failure; a constructor that fails after the namespace exists deletes it before throwing.
 */
public class NodeNamespace implements AutoCloseable {
    public static final ObjectMapper JSON = new ObjectMapper();
    private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(30);

    protected final NetNs ns;
    private ExecutorService leaseEvents;
    private Network network;

    /** A namespace whose name starts with {@code prefix} (≤ 6 chars), lo up. */
    protected NodeNamespace(String prefix) throws Exception {
        NetnsPrivilege.require(); // under -Pintegration a missing privilege fails, never skips
        ns = NetNs.create(NetnsNames.unique(prefix));
        try {
            ip("link", "set", "lo", "up");
        } catch (Exception e) {
            close();
            throw e;
        }
    }

    public final String name() {
        return ns.name();
    }

    /** The network {@link #apply} and {@link #reconcile} drive and {@link #close()} closes first (the latest one registered). */
    protected final void attach(Network registered) {
        this.network = registered;
    }

    /** Applies a batch of lease events on the lease-events thread, as the daemon's lease loop does. */
    public final void apply(LeaseEvent... batch) throws Exception {
        onLeaseEvents(() -> {
            network.apply(List.of(batch));
            return null;
        });
    }

    /** One reconcile pass on the lease-events thread. */
    public final void reconcile() throws Exception {
        onLeaseEvents(() -> {
            network.reconcile();
            return null;
        });
    }

    /** Runs {@code work} inside the namespace on the calling thread. */
    public final <T> T inside(Callable<T> work) throws Exception {
        return ns.call(work);
    }

    /** Runs {@code work} on this node's lease-events thread (inside the namespace), like the daemon does. */
    public final <T> T onLeaseEvents(Callable<T> work) throws Exception {
        try {
            return leaseEvents().submit(() -> ns.call(work)).get(60, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof Exception ex) {
                throw ex;
            }
            throw e;
        }
    }

    /** The executor a backend gets: the lease-events thread, entering the namespace for each task. */
    protected final Executor inNamespace() {
        return task -> leaseEvents().execute(() -> {
            try {
                ns.run(task::run);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (Exception e) {
                throw new IllegalStateException("task failed in " + name(), e);
            }
        });
    }

    private synchronized ExecutorService leaseEvents() {
        if (leaseEvents == null) {
            leaseEvents = Executors.newSingleThreadExecutor(r -> new Thread(r, "lease-events-" + ns.name()));
        }
        return leaseEvents;
    }

    /** {@code ip -n <node> ARGS}: stdout and stderr, or an IOException naming the command and its output. */
    public final String ip(String... args) throws IOException, InterruptedException {
        return run(prepend(List.of("ip", "-n", name()), args));
    }

    /** {@code ip netns exec <node> ARGS}. */
    public final String exec(String... args) throws IOException, InterruptedException {
        return run(prepend(List.of("ip", "netns", "exec", name()), args));
    }

    /** Like {@link #exec} but returns the output whatever the exit code (ping with losses exits 1). */
    public final String execAnyExit(String... args) throws IOException, InterruptedException {
        Cmd.Result r = Cmd.run(COMMAND_TIMEOUT, prepend(List.of("ip", "netns", "exec", name()), args));
        return r.stdout() + r.stderr();
    }

    /** {@code ip -n <node> -j ARGS} parsed ({@code []} for no output). */
    public final JsonNode ipJson(String... args) throws IOException, InterruptedException {
        String out = run(prepend(List.of("ip", "-n", name(), "-j"), args)).strip();
        return JSON.readTree(out.isEmpty() ? "[]" : out);
    }

    /** {@code ip -d -j link show dev <name>}, or null when the device does not exist. */
    public final JsonNode link(String dev) throws IOException, InterruptedException {
        Cmd.Result r = Cmd.run(COMMAND_TIMEOUT, List.of("ip", "-n", name(), "-d", "-j", "link", "show", "dev", dev));
        String out = r.stdout().strip();
        if (r.exitCode() != 0 || !out.startsWith("[")) {
            return null;
        }
        JsonNode n = JSON.readTree(out);
        return n.isEmpty() ? null : n.get(0);
    }

    /** A command bounded in time; exit 0 or an IOException naming it; stdout and stderr. */
    public static String run(List<String> cmd) throws IOException, InterruptedException {
        Cmd.Result r = Cmd.run(COMMAND_TIMEOUT, cmd).orThrow();
        return r.stdout() + r.stderr();
    }

    public static List<String> prepend(List<String> head, String... args) {
        List<String> all = new ArrayList<>(head);
        all.addAll(List.of(args));
        return all;
    }

    /**
     * A {@code bytes}-long random TCP stream from {@code from} to {@code toAddress}:5001 in {@code to}
     * (many full-size packets, batched sends and reads); returns its CRC32 once the receiver's matches,
     * an AssertionError otherwise.
     */
    public static long tcpTransferCrc(NodeNamespace from, NodeNamespace to, String toAddress, int bytes) throws Exception {
        CompletableFuture<Long> received = new CompletableFuture<>();
        CountDownLatch listening = new CountDownLatch(1);
        Thread server = new Thread(() -> {
            try {
                received.complete(to.inside(() -> {
                    try (ServerSocket ss = new ServerSocket()) {
                        ss.setSoTimeout(30_000);
                        ss.bind(new InetSocketAddress(toAddress, 5001));
                        listening.countDown();
                        try (Socket s = ss.accept()) {
                            s.setSoTimeout(30_000);
                            return crc(s.getInputStream());
                        }
                    }
                }));
            } catch (Exception e) {
                received.completeExceptionally(e);
            }
        }, "tcp-sink");
        server.start();
        if (!listening.await(30, TimeUnit.SECONDS)) {
            throw new AssertionError("TCP sink in " + to.name() + " not listening on " + toAddress + ":5001 within 30 s");
        }
        long sent = from.inside(() -> {
            CRC32 crc = new CRC32();
            Random random = new Random(42);
            byte[] chunk = new byte[64 << 10];
            try (Socket s = new Socket()) {
                s.connect(new InetSocketAddress(toAddress, 5001), 10_000);
                for (int done = 0; done < bytes; done += chunk.length) {
                    random.nextBytes(chunk);
                    crc.update(chunk);
                    s.getOutputStream().write(chunk);
                }
            }
            return crc.getValue();
        });
        long got = received.get(org.jflannel.testsupport.cluster.Bounds.scaled(java.time.Duration.ofSeconds(90)).toSeconds(),
                TimeUnit.SECONDS);
        server.join(10_000);
        if (got != sent) {
            throw new AssertionError("CRC32 of the stream received in " + to.name() + " " + Long.toHexString(got)
                    + " != sent from " + from.name() + " " + Long.toHexString(sent));
        }
        return got;
    }

    private static long crc(InputStream in) throws IOException {
        CRC32 crc = new CRC32();
        byte[] buf = new byte[64 << 10];
        for (int n = in.read(buf); n >= 0; n = in.read(buf)) {
            crc.update(buf, 0, n);
        }
        return crc.getValue();
    }

    @Override
    public void close() throws Exception {
        try {
            if (network != null) {
                network.close();
            }
        } finally {
            try {
                ExecutorService e;
                synchronized (this) {
                    e = leaseEvents;
                }
                if (e != null) {
                    e.shutdownNow();
                    e.awaitTermination(10, TimeUnit.SECONDS);
                }
            } finally {
                ns.delete();
                ns.close();
            }
        }
    }
}
