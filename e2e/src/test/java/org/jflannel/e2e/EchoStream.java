package org.jflannel.e2e;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.jflannel.linuxnet.netns.NetNs;
import org.jflannel.testsupport.cluster.Wait;

/**
 * One long-lived TCP connection between two pods that keeps proving it works: every {@link #PACE} the client
 * sends the next number of a sequence and needs it echoed within {@link #READ_WITHIN}; a wrong number, a
 * reset or a silence ends it with {@link #failure()}. Bounded: it stops by itself after {@link #MAX_ROUNDS}
 * (a few minutes at its pace). The server listens in the server pod on {@code port} and takes one connection;
 * the listening socket stays until {@link #close()} (a later SYN to it still gets its SYN-ACK from the backlog).
 */
final class EchoStream implements AutoCloseable {
    static final Duration PACE = Duration.ofMillis(20);
    static final Duration READ_WITHIN = Duration.ofSeconds(5);
    static final long MAX_ROUNDS = 15_000;

    private final String name;
    private final ServerSocket server;
    private final Socket client;
    private final ScheduledExecutorService threads;
    private final AtomicLong rounds = new AtomicLong();
    private final AtomicReference<String> failure = new AtomicReference<>();

    private EchoStream(String name, ServerSocket server, Socket client, ScheduledExecutorService threads) {
        this.name = name;
        this.server = server;
        this.client = client;
        this.threads = threads;
    }

    /** Connects from {@code clientNs} to {@code dst}:{@code port}, served in {@code serverNs}, and starts the rounds. */
    static EchoStream start(String name, NetNs clientNs, NetNs serverNs, InetAddress dst, int port) throws Exception {
        ServerSocket ss = serverNs.call(() -> new ServerSocket(port));
        ScheduledExecutorService threads = Executors.newScheduledThreadPool(2, r -> {
            Thread t = new Thread(r, "echo-stream-" + name);
            t.setDaemon(true);
            return t;
        });
        Socket c = null;
        try {
            threads.execute(() -> echo(ss));
            c = clientNs.call(() -> {
                Socket x = new Socket();
                x.bind(null);
                return x;
            });
            c.connect(new InetSocketAddress(dst, port), (int) READ_WITHIN.toMillis());
            c.setSoTimeout((int) READ_WITHIN.toMillis());
            c.setTcpNoDelay(true);
        } catch (Exception e) {
            threads.shutdownNow();
            ss.close();
            if (c != null) {
                c.close();
            }
            throw e;
        }
        EchoStream s = new EchoStream(name, ss, c, threads);
        DataOutputStream out = new DataOutputStream(c.getOutputStream());
        DataInputStream in = new DataInputStream(c.getInputStream());
        threads.scheduleAtFixedRate(() -> s.round(out, in), 0, PACE.toMillis(), TimeUnit.MILLISECONDS);
        return s;
    }

    private void round(DataOutputStream out, DataInputStream in) {
        if (failure.get() != null) {
            return;
        }
        long n = rounds.get() + 1;
        try {
            out.writeLong(n);
            out.flush();
            long back = in.readLong();
            if (back != n) {
                throw new IOException("sent " + n + ", got back " + back);
            }
            rounds.set(n);
            if (n >= MAX_ROUNDS) {
                failure.compareAndSet(null, "stopped after " + MAX_ROUNDS + " rounds (its bound)");
            }
        } catch (IOException e) {
            failure.compareAndSet(null, "round " + n + ": " + e);
        }
    }

    private static void echo(ServerSocket ss) {
        try (Socket s = ss.accept()) {
            DataInputStream in = new DataInputStream(s.getInputStream());
            DataOutputStream out = new DataOutputStream(s.getOutputStream());
            while (true) {
                out.writeLong(in.readLong());
                out.flush();
            }
        } catch (IOException e) {
            // the connection ended (the client failed or closed): the client side says which
        }
    }

    long rounds() {
        return rounds.get();
    }

    /** Why the stream ended, {@code null} while it runs. */
    String failure() {
        return failure.get();
    }

    /** Waits (bounded) until {@code more} further rounds went through; fails naming the stream's failure if it ended. */
    long awaitProgress(long more, Duration within) throws Exception {
        long target = rounds() + more;
        Wait.until(name + ": " + more + " more echo rounds", within, () -> {
            if (failure() != null) {
                throw new Wait.Abort(name + " ended after " + rounds() + " rounds: " + failure());
            }
            return rounds() >= target;
        });
        return rounds();
    }

    /** Waits (bounded) until the stream either went {@code more} rounds further or ended; true if it went on. */
    boolean wentOnOrEnded(long more, Duration within) throws Exception {
        long target = rounds() + more;
        Wait.until(name + ": " + more + " more rounds or its end", within, () -> failure() != null || rounds() >= target);
        return failure() == null;
    }

    @Override
    public String toString() {
        return name + ": " + rounds() + " rounds" + (failure() == null ? ", running" : ", ended: " + failure());
    }

    @Override
    public void close() throws IOException {
        threads.shutdownNow();
        try {
            client.close();
        } finally {
            server.close();
        }
    }
}
