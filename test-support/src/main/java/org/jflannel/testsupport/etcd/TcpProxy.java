package org.jflannel.testsupport.etcd;

import java.io.IOException;
import java.io.InputStream;
import java.io.InterruptedIOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.jflannel.linuxnet.netns.NetNs;

/**
 * A loopback TCP relay in front of a server. For fault tests, {@link #cut()} drops every connection
 * and refuses new ones (the port stays reserved by nobody else in practice, and is re-bound by
 * {@link #resume()}), so a client sees its server vanish and come back while the server itself keeps
 * running and can be changed behind the client's back; {@link #setLatency} makes the link slow;
 * {@link #reject()} resets every connection once it sends its first byte and counts them, so that a test sees a client's
 * connect attempts while the server looks down to it. {@link #inNamespace} lets a process inside a
 * network namespace reach a server on the test JVM's loopback without any interface in the host
 * namespace: the listening socket is created on the namespace's thread (a socket stays in the
 * namespace it was created in), the upstream connections on ordinary threads.
 *
 * <p>Owns: one listening socket, its accept thread, two pump threads per relayed connection.
 */
public final class TcpProxy implements AutoCloseable {
    private final int targetPort;
    private final int port;
    private final NetNs namespace;
    private final List<Socket> sockets = new ArrayList<>();
    private volatile long latencyNanos;
    private volatile boolean rejecting;
    /** {@link System#nanoTime()} of each connection reset in {@link #reject()} mode. */
    private final List<Long> rejections = new CopyOnWriteArrayList<>();
    private ServerSocket server;
    private Thread acceptor;

    private TcpProxy(int port, int targetPort, NetNs namespace) {
        this.port = port;
        this.targetPort = targetPort;
        this.namespace = namespace;
    }

    /** Relays a free loopback port to {@code 127.0.0.1:targetPort}. */
    public static TcpProxy start(int targetPort) throws IOException {
        int port;
        try (ServerSocket probe = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            port = probe.getLocalPort();
        }
        TcpProxy p = new TcpProxy(port, targetPort, null);
        p.resume();
        return p;
    }

    /** Relays {@code ns}'s 127.0.0.1:{@code nsPort} to this namespace's {@code 127.0.0.1:targetPort}. */
    public static TcpProxy inNamespace(NetNs ns, int nsPort, int targetPort) throws IOException {
        TcpProxy p = new TcpProxy(nsPort, targetPort, ns);
        p.resume();
        return p;
    }

    public String endpoint() {
        return "http://127.0.0.1:" + port;
    }

    /**
     * From now on every chunk relayed (both directions, open connections too) is held {@code latency}
     * after it was read before it is written, as over a slow link: order kept, nothing lost.
     * {@link Duration#ZERO} ends it.
     */
    public void setLatency(java.time.Duration latency) {
        latencyNanos = latency.toNanos();
    }

    /** Listens again on the same port and relays (also after {@link #reject()}). */
    public synchronized void resume() throws IOException {
        rejecting = false;
        if (server != null) {
            return;
        }
        resume0();
    }

    private ServerSocket listen() throws IOException {
        ServerSocket s = new ServerSocket();
        s.setReuseAddress(true);
        s.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
        return s;
    }

    private ServerSocket listenInNamespace() throws IOException {
        try {
            return namespace.call(this::listen);
        } catch (IOException | RuntimeException e) {
            throw e;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("listen in namespace " + namespace.name() + ": interrupted");
        } catch (Exception e) {
            throw new IOException("listen in namespace " + namespace.name() + ": " + e.getMessage(), e);
        }
    }

    /** Closes every relayed connection and stops listening. */
    public synchronized void cut() throws IOException {
        if (server == null) {
            return;
        }
        server.close();
        server = null;
        for (Socket s : sockets) {
            s.close();
        }
        sockets.clear();
    }

    /**
     * Drops every relayed connection and from now on, until {@link #resume()}, accepts each new connection and
     * resets it (RST, nothing written) as soon as it sends its first byte, or after {@link #REJECT_WAIT_MS} if it sends
     * none: to a gRPC channel, which sends its preface at once, such a connection failed as a refused one does (it
     * never got the server's HTTP/2 settings, so the channel backs off its reconnects), but unlike a closed port each
     * attempt is seen, in {@link #rejections()}. A plain TCP connect (a reachability probe) succeeds, though: it is
     * never reset before the connecting side has seen it complete (a reset at once, on loopback, could reach the
     * connecting socket before its connect returned and fail it as "Connection reset").
     */
    public synchronized void reject() throws IOException {
        rejecting = true;
        for (Socket s : sockets) {
            s.close();
        }
        sockets.clear();
        if (server == null) {
            resume0();
        } // else keep listening: closing and re-binding at once can fail (the accept thread may still hold the port)
    }

    /** When each connection reset in {@link #reject()} mode so far was accepted ({@link System#nanoTime()}). */
    public List<Long> rejections() {
        return List.copyOf(rejections);
    }

    private void resume0() throws IOException {
        ServerSocket s = namespace == null ? listen() : listenInNamespace();
        server = s;
        acceptor = new Thread(() -> acceptLoop(s), "tcp-proxy-accept-" + port);
        acceptor.setDaemon(true);
        acceptor.start();
    }

    private void acceptLoop(ServerSocket s) {
        while (!s.isClosed()) {
            Socket client;
            try {
                client = s.accept();
            } catch (IOException e) {
                return; // listening socket closed by cut() or close()
            }
            if (rejecting) {
                reset(client);
                continue;
            }
            try {
                Socket upstream = new Socket(InetAddress.getLoopbackAddress(), targetPort);
                synchronized (this) {
                    if (server != s) { // cut meanwhile
                        client.close();
                        upstream.close();
                        return;
                    }
                    if (rejecting) { // reject() meanwhile
                        upstream.close();
                        reset(client);
                        continue;
                    }
                    sockets.add(client);
                    sockets.add(upstream);
                }
                pump(client, upstream);
                pump(upstream, client);
            } catch (IOException e) {
                closeQuietly(client); // target down: the client sees a closed connection
            }
        }
    }

    /** How long a rejected connection that sends nothing is kept before its reset. */
    static final int REJECT_WAIT_MS = 2000;

    /**
     * {@link #reject()} mode: counts the connection (at its accept) and, on a thread of its own, closes it with a RST
     * once it sent a byte, closed its side, or {@link #REJECT_WAIT_MS} passed.
     */
    private void reset(Socket client) {
        rejections.add(System.nanoTime());
        Thread t = new Thread(() -> {
            try {
                client.setSoTimeout(REJECT_WAIT_MS);
                client.getInputStream().read();
            } catch (IOException ignored) {
                // timed out, or reset or closed by the peer
            }
            try {
                client.setSoLinger(true, 0);
            } catch (IOException ignored) {
                // closed by the peer already
            }
            closeQuietly(client);
        }, "tcp-proxy-reject-" + port);
        t.setDaemon(true);
        t.start();
    }

    private void pump(Socket from, Socket to) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[16384];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                for (int n; (n = in.read(buf)) >= 0; ) {
                    hold(System.nanoTime() + latencyNanos);
                    out.write(buf, 0, n);
                    out.flush();
                }
            } catch (IOException closed) {
                // either side closed: end this direction
            } finally {
                closeQuietly(from);
                closeQuietly(to);
            }
        }, "tcp-proxy-pump-" + port);
        t.setDaemon(true);
        t.start();
    }

    /** Waits until {@code due} (the injected latency); an interrupt ends the relay of this direction. */
    private static void hold(long due) throws java.io.InterruptedIOException {
        for (long left = due - System.nanoTime(); left > 0; left = due - System.nanoTime()) {
            java.util.concurrent.locks.LockSupport.parkNanos(left);
            if (Thread.interrupted()) {
                throw new java.io.InterruptedIOException("relay interrupted");
            }
        }
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // already closed
        }
    }

    @Override
    public synchronized void close() throws IOException {
        cut();
    }
}
