package org.jflannel.testsupport.netns;

import java.io.IOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.jflannel.linuxnet.netns.NetNs;

/**
 * Who reaches whom, for policy tests: listeners in a namespace (TCP ports that accept and close, a UDP port that
 * echoes) and probes from one (a TCP connect, which needs the SYN-ACK back; a UDP echo, which needs the reply).
 * The sockets are made in the namespace, where they stay; the waiting is on the caller's thread, so probes from
 * one namespace can run side by side.
 */
public final class Reachability {
    private Reachability() {
    }

    /** TCP listeners on {@code ports} (every address of the namespace), until closed. */
    public static List<AutoCloseable> tcpListeners(NetNs ns, int... ports) throws Exception {
        List<AutoCloseable> all = new ArrayList<>();
        for (int port : ports) {
            ServerSocket ss = ns.call(() -> new ServerSocket(port));
            all.add(ss);
            daemon("listen-tcp-" + ns.name() + "-" + port, () -> {
                while (!ss.isClosed()) {
                    try (Socket s = ss.accept()) {
                        s.getOutputStream().flush();
                    } catch (IOException e) {
                        return;
                    }
                }
            });
        }
        return all;
    }

    /** A UDP echo on {@code port}, until closed. */
    public static AutoCloseable udpEcho(NetNs ns, int port) throws Exception {
        DatagramSocket ds = ns.call(() -> new DatagramSocket(port));
        daemon("listen-udp-" + ns.name() + "-" + port, () -> {
            byte[] buf = new byte[64];
            while (!ds.isClosed()) {
                try {
                    DatagramPacket in = new DatagramPacket(buf, buf.length);
                    ds.receive(in);
                    ds.send(new DatagramPacket(buf, in.getLength(), in.getSocketAddress()));
                } catch (IOException e) {
                    return;
                }
            }
        });
        return ds;
    }

    /** Whether a TCP connect from {@code from} to {@code to}:{@code port} completes within {@code within}. */
    public static boolean tcpConnects(NetNs from, InetAddress to, int port, Duration within) throws Exception {
        try (Socket s = from.call(() -> {
            Socket x = new Socket();
            x.bind(null);
            return x;
        })) {
            s.connect(new InetSocketAddress(to, port), (int) within.toMillis());
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** Whether a datagram from {@code from} to {@code to}:{@code port} is echoed back within {@code within}. */
    public static boolean udpEchoes(NetNs from, InetAddress to, int port, Duration within) throws Exception {
        try (DatagramSocket s = from.call(DatagramSocket::new)) {
            s.setSoTimeout((int) within.toMillis());
            byte[] msg = "hello".getBytes(StandardCharsets.US_ASCII);
            s.send(new DatagramPacket(msg, msg.length, new InetSocketAddress(to, port)));
            s.receive(new DatagramPacket(new byte[16], 16));
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    private static void daemon(String name, Runnable r) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        t.start();
    }
}
