package org.jflannel.testsupport.cluster;

import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetSocketAddress;
import java.util.List;

/** Datagrams sent the way the hostile-underlay tests send them: from one socket of the calling thread's namespace. */
public final class Datagrams {
    private Datagrams() {
    }

    /**
     * Sends each message once from {@code from} (port 0: an ephemeral one) to {@code to}, 50 at a time with a 20-ms
     * pause: the pacing of a bounded load loop, so that a burst past the receiver's socket buffer (the kernel's drop,
     * not the daemon's) stays rare; the tests subtract the receiver's {@code RcvbufErrors} all the same.
     */
    public static void sendPaced(InetSocketAddress from, InetSocketAddress to, List<byte[]> messages) throws Exception {
        try (DatagramSocket s = new DatagramSocket(from)) {
            for (int i = 0; i < messages.size(); i++) {
                byte[] m = messages.get(i);
                s.send(new DatagramPacket(m, m.length, to));
                if (i % 50 == 49) {
                    Thread.sleep(20);
                }
            }
        }
    }

    /** The sum of {@code v}: counters read as one total. */
    public static double sum(double[] v) {
        double s = 0;
        for (double x : v) {
            s += x;
        }
        return s;
    }
}
