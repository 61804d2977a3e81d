package org.jflannel.testsupport.cluster;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import javax.net.ssl.SSLContext;
import org.jflannel.linuxnet.netns.NetNs;

/**
 * The "kubernetes" Service as a pod on a node sees it: TLS on {@code 127.0.0.1:port} inside a node's
 * network namespace (the listening socket is made on the namespace's thread, so it lives there),
 * terminated here and relayed in plain HTTP to the mock API server on this JVM's loopback. It plays
 * kube-proxy plus the API server's TLS, so flanneld's in-cluster configuration (https, the
 * service-account CA) runs unchanged.
 *
 * <p>Owns: the listening socket, its accept thread, two pump threads per connection.
 */
final class TlsRelay implements AutoCloseable {
    private final ServerSocket server;
    private final int targetPort;
    private final List<Socket> sockets = new ArrayList<>();
    private final Thread acceptor;

    private TlsRelay(ServerSocket server, int targetPort, String name) {
        this.server = server;
        this.targetPort = targetPort;
        this.acceptor = new Thread(this::acceptLoop, "tls-relay-" + name);
        acceptor.setDaemon(true);
        acceptor.start();
    }

    static TlsRelay inNamespace(NetNs ns, int port, SSLContext tls, int targetPort) throws Exception {
        ServerSocket s = ns.call(() -> {
            ServerSocket ss = tls.getServerSocketFactory().createServerSocket();
            ss.setReuseAddress(true);
            ss.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port));
            return ss;
        });
        return new TlsRelay(s, targetPort, ns.name());
    }

    private void acceptLoop() {
        while (!server.isClosed()) {
            try {
                Socket client = server.accept();
                Socket upstream = new Socket(InetAddress.getLoopbackAddress(), targetPort);
                synchronized (sockets) {
                    sockets.add(client);
                    sockets.add(upstream);
                }
                pump(client, upstream);
                pump(upstream, client);
            } catch (IOException e) {
                if (server.isClosed()) {
                    return;
                }
                // one failed handshake or connection; keep serving the others
            }
        }
    }

    private static void pump(Socket from, Socket to) {
        Thread t = new Thread(() -> {
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                byte[] buf = new byte[16 * 1024];
                for (int n = in.read(buf); n >= 0; n = in.read(buf)) {
                    out.write(buf, 0, n);
                    out.flush();
                }
            } catch (IOException closed) {
                // either side went away: close both below
            } finally {
                closeQuietly(from);
                closeQuietly(to);
            }
        }, "tls-relay-pump");
        t.setDaemon(true);
        t.start();
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }

    @Override
    public void close() throws IOException {
        server.close();
        synchronized (sockets) {
            sockets.forEach(TlsRelay::closeQuietly);
            sockets.clear();
        }
    }
}
