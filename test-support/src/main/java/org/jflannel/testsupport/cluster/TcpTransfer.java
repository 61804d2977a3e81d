package org.jflannel.testsupport.cluster;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.SplittableRandom;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.zip.CRC32;
import org.jflannel.linuxnet.netns.NetNs;

/**
 * One TCP stream of pseudo-random bytes from pod {@code from} to pod {@code to}, with a CRC-32 taken
 * on each end: what the sender wrote and what the receiver read. The sockets are opened inside the
 * pods' namespaces (they stay bound to them); the copying runs on two plain threads. Bounded: a
 * receiver that sees no byte for {@link #IDLE} gives up and the sender's socket is closed under it,
 * as when the whole run is out of time; either way the result says how far each end got.
 */
public record TcpTransfer(Pod from, Pod to, long bytes, long sentBytes, long sentCrc, long receivedBytes,
                          long receivedCrc, Duration took, String failure, Pod.Family family) {
    public static final int PORT = 5201;
    static final Duration IDLE = Duration.ofSeconds(20);
    private static final int CHUNK = 64 << 10;

    /** Whether every byte arrived, in order and unchanged. */
    public boolean intact() {
        return failure == null && receivedBytes == bytes && sentBytes == bytes && receivedCrc == sentCrc;
    }

    /** Megabits per second over the whole run (noisy on a shared machine: for the log, never for assertions). */
    public double mbitPerSecond() {
        return took.isZero() ? 0 : receivedBytes * 8.0 / 1e6 / (took.toNanos() / 1e9);
    }

    @Override
    public String toString() {
        return "tcp " + from.name() + " " + from.address(family) + " -> " + to.name() + " " + to.address(family) + ": sent " + sentBytes + "/" + bytes
                + " crc=" + Long.toHexString(sentCrc) + ", received " + receivedBytes + " crc=" + Long.toHexString(receivedCrc)
                + " in " + took.toMillis() + " ms (" + Math.round(mbitPerSecond()) + " Mbit/s)"
                + (failure == null ? "" : ", failed: " + failure);
    }

    /** Sends {@code bytes} from {@code from} to {@code to}, taking at most {@code within}. */
    public static TcpTransfer run(Pod from, Pod to, long bytes, Duration within) throws Exception {
        return run(from, to, bytes, within, Pod.Family.IPV4);
    }

    /** The same over {@code family}: the server binds and the client connects to {@code to}'s address of that family. */
    public static TcpTransfer run(Pod from, Pod to, long bytes, Duration within, Pod.Family family) throws Exception {
        java.net.InetAddress dstIp = Inet.parse(to.address(family));
        ExecutorService threads = Executors.newFixedThreadPool(2, r -> {
            Thread t = new Thread(r, "tcp-transfer");
            t.setDaemon(true);
            return t;
        });
        try (NetNs src = NetNs.open(from.namespace()); NetNs dst = NetNs.open(to.namespace())) {
            ServerSocket server = dst.call(() -> {
                ServerSocket ss = new ServerSocket();
                ss.bind(new InetSocketAddress(dstIp, PORT));
                ss.setSoTimeout((int) IDLE.toMillis());
                return ss;
            });
            long start = System.nanoTime();
            Progress sent = new Progress();
            Progress got = new Progress();
            String failure = null;
            try (server) {
                Future<?> receiving = threads.submit(() -> receive(server, got));
                Socket client = src.call(() -> {
                    Socket s = new Socket();
                    s.connect(new InetSocketAddress(dstIp, PORT), (int) IDLE.toMillis());
                    return s;
                });
                try (client) {
                    Future<?> sending = threads.submit(() -> send(client, bytes, sent));
                    // a receiver that gave up (nothing for IDLE) ends the sender too, rather than the whole budget
                    String r = outcome("receiver", receiving, within, server);
                    if (r != null) {
                        client.close();
                    }
                    String w = outcome("sender", sending, r == null ? Duration.ofSeconds(10) : Duration.ofSeconds(5), client);
                    failure = r == null ? w : w == null ? r : r + "; " + w;
                }
            } finally {
                threads.shutdownNow();
            }
            return new TcpTransfer(from, to, bytes, sent.bytes, sent.crc.getValue(), got.bytes, got.crc.getValue(),
                    Duration.ofNanos(System.nanoTime() - start), failure, family);
        }
    }

    /** Bytes and CRC so far, kept when a side fails half-way. */
    private static final class Progress {
        final CRC32 crc = new CRC32();
        volatile long bytes;
    }

    /** Waits for one side; null when it finished, else why not (and its socket is closed to end it). */
    private static String outcome(String side, Future<?> f, Duration within, java.io.Closeable socket)
            throws InterruptedException, IOException {
        try {
            f.get(within.toMillis(), TimeUnit.MILLISECONDS);
            return null;
        } catch (TimeoutException e) {
            socket.close(); // unblocks a write or an accept
            return side + " still blocked after " + within.toMillis() + " ms";
        } catch (ExecutionException e) {
            return side + ": " + e.getCause().getMessage();
        }
    }

    private static Void send(Socket s, long bytes, Progress p) throws IOException {
        SplittableRandom random = new SplittableRandom(bytes);
        byte[] chunk = new byte[CHUNK];
        OutputStream out = s.getOutputStream();
        while (p.bytes < bytes) {
            int n = (int) Math.min(chunk.length, bytes - p.bytes);
            random.nextBytes(chunk);
            out.write(chunk, 0, n);
            p.crc.update(chunk, 0, n);
            p.bytes += n;
        }
        s.shutdownOutput(); // the receiver's read returns -1 once everything before it arrived
        return null;
    }

    private static Void receive(ServerSocket server, Progress p) throws IOException {
        try (Socket s = server.accept()) {
            s.setSoTimeout((int) IDLE.toMillis());
            InputStream in = s.getInputStream();
            byte[] buf = new byte[CHUNK];
            for (int n; (n = in.read(buf)) > 0; ) {
                p.crc.update(buf, 0, n);
                p.bytes += n;
            }
        }
        return null;
    }
}
