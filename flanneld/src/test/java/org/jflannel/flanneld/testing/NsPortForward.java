package org.jflannel.flanneld.testing;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Lets a process inside a throwaway namespace reach a server on the test JVM's loopback without any
 * interface in the host namespace: the listening socket is created on the namespace's thread (a
 * socket stays in the namespace it was created in), the upstream connections on ordinary threads.
 */
public final class NsPortForward implements AutoCloseable {
    private final ServerSocket listener;
    private final List<Socket> sockets = new CopyOnWriteArrayList<>();
    private final Thread acceptor;

    private NsPortForward(ServerSocket listener, int targetPort) {
        this.listener = listener;
        this.acceptor = new Thread(() -> accept(targetPort), "ns-forward-accept");
        this.acceptor.setDaemon(true);
        this.acceptor.start();
    }

    /** Listens on the namespace's 127.0.0.1:{@code nsPort}, forwards to the host's 127.0.0.1:{@code targetPort}. */
    public static NsPortForward start(ThrowawayNs ns, int nsPort, int targetPort) throws Exception {
        ServerSocket s = ns.netns().call(() -> new ServerSocket(nsPort, 50, InetAddress.getLoopbackAddress()));
        return new NsPortForward(s, targetPort);
    }

    private void accept(int targetPort) {
        while (!listener.isClosed()) {
            try {
                Socket inner = listener.accept();
                Socket outer = new Socket(InetAddress.getLoopbackAddress(), targetPort);
                sockets.add(inner);
                sockets.add(outer);
                pump(inner, outer);
                pump(outer, inner);
            } catch (IOException e) {
                return; // listener closed
            }
        }
    }

    private static void pump(Socket from, Socket to) {
        Thread t = new Thread(() -> {
            byte[] buf = new byte[16384];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                for (int n; (n = in.read(buf)) >= 0; ) {
                    out.write(buf, 0, n);
                    out.flush();
                }
            } catch (IOException e) {
                // one side closed: the finally of the other pump closes the rest
            } finally {
                closeQuietly(from);
                closeQuietly(to);
            }
        }, "ns-forward-pump");
        t.setDaemon(true);
        t.start();
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException e) {
            // already closed
        }
    }

    @Override
    public void close() throws IOException {
        listener.close();
        sockets.forEach(NsPortForward::closeQuietly);
    }
}
