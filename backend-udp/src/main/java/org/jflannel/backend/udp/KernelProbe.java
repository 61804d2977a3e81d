package org.jflannel.backend.udp;

import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import org.jflannel.linuxnet.socket.IcmpSocket;
import org.jflannel.linuxnet.NetlinkException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ours: proves the kernel datapath's peers ({@link KernelPath}). A peer whose lease says it
 * decapsulates in its kernel gets TCP and UDP from our kernel only once its kernel has been seen
 * encapsulating to us ({@link KernelPrograms#encap}). Traffic alone would not get there (both ends of
 * a new pair wait for each other), so this thread pings each unproven routed peer's overlay address
 * (its flannel0) every {@link #PROBE_EVERY_NANOS}: the echo leaves through our kernel (ICMP needs no
 * proof), and a peer whose kernel decapsulates answers through its encapsulating program with UDP
 * checksum 0, which sets its proof in our decapsulating program. An upstream node answers through its
 * daemon, checksummed, and so stays unproven: it gets upstream's datagrams from our packet threads.
 * One line per change of a peer's state.
 *
 * <p>The raw socket is opened by the registering thread, so it belongs to the node's network
 * namespace whichever thread then uses it. Without CAP_NET_RAW there is no probe (one line); pods'
 * own pings then prove peers.
 */
final class KernelProbe implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(KernelProbe.class);
    static final long PROBE_EVERY_NANOS = 1_000_000_000L;
    private static final int WAIT_MILLIS = 200;
    private static final int ECHO_ID = 0x6a66; // "jf"
    /** An empty echo: 20 bytes IPv4, 8 bytes ICMP. */
    private static final int ECHO_LENGTH = 28;

    private final KernelPath path;
    private final IcmpSocket socket;
    private final Thread thread;
    private volatile boolean stopped;
    private final Map<Peer, Long> probedAt = new HashMap<>();
    private final Set<Peer> proven = new HashSet<>();
    private int seq;

    private KernelProbe(KernelPath path, IcmpSocket socket) {
        this.path = path;
        this.socket = socket;
        this.thread = new Thread(this::run, "udp-kernel-probe");
        this.thread.setDaemon(true);
    }

    /** Opens the socket here (this thread's namespace) and starts the thread; null without a socket. */
    static KernelProbe start(KernelPath path) {
        IcmpSocket socket;
        try {
            socket = IcmpSocket.open();
        } catch (NetlinkException | RuntimeException e) {
            LOG.warn("udp kernel probe unavailable, pods' pings prove peers error={}", e.getMessage());
            return null;
        }
        KernelProbe p = new KernelProbe(path, socket);
        p.thread.start();
        return p;
    }

    private void run() {
        long lastTick = 0;
        while (!stopped) {
            try {
                socket.receive(WAIT_MILLIS); // replies are not needed (the programs saw them): drain and pace
                long now = System.nanoTime();
                if (now - lastTick >= WAIT_MILLIS * 1_000_000L) {
                    lastTick = now;
                    tick(now);
                }
            } catch (NetlinkException | RuntimeException e) {
                if (!stopped) {
                    LOG.warn("udp kernel probe failed, retrying error={}", e.getMessage());
                    java.util.concurrent.locks.LockSupport.parkNanos(WAIT_MILLIS * 1_000_000L);
                }
            }
        }
    }

    private void tick(long now) throws NetlinkException {
        path.checkGpe(now);
        var peers = path.routedPeerList();
        probedAt.keySet().retainAll(peers);
        proven.retainAll(peers);
        for (Peer p : peers) {
            boolean ok = path.proven(p);
            if (ok && proven.add(p)) {
                LOG.info("udp kernel peer proven, the kernel sends it everything subnet={} publicIp={}", p.subnet(),
                        p.endpoint().getAddress().getHostAddress());
            } else if (!ok && proven.remove(p)) {
                LOG.info("udp kernel peer unproven, TCP and UDP to it from the packet threads subnet={} publicIp={}", p.subnet(),
                        p.endpoint().getAddress().getHostAddress());
            }
            Long last = probedAt.get(p);
            if (!ok && (last == null || now - last >= PROBE_EVERY_NANOS)) {
                probedAt.put(p, now);
                try {
                    socket.sendEcho(p.subnet().inetAddress(), ECHO_ID, seq++ & 0xffff, ECHO_LENGTH);
                } catch (NetlinkException e) {
                    LOG.debug("udp kernel probe not sent subnet={} error={}", p.subnet(), e.getMessage());
                }
            }
        }
    }

    @Override
    public void close() throws InterruptedException {
        stopped = true;
        thread.join(2_000);
        socket.close();
    }
}
