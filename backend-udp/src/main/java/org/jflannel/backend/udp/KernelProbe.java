package org.jflannel.backend.udp;

import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.socket.IcmpMessage;
import org.jflannel.linuxnet.socket.IcmpSocket;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ours: proves the kernel datapath's peers ({@link KernelPath}). A peer whose lease says it decapsulates in its kernel
 * gets TCP and UDP from our kernel only once its kernel has been seen encapsulating to us ({@link KernelPrograms#encap}).
 * Traffic alone would not get there (both ends of a new pair wait for each other), and no datagram may decide it (any
 * host on the underlay can send one with the peer's address), so this thread pings each unproven routed peer's overlay
 * address (its flannel0) every {@link PeerProof#PROBE_EVERY_NANOS} with an echo whose payload is a fresh random nonce,
 * written into the peer's proof entry first. The echo leaves through our kernel (ICMP needs no proof); a peer whose
 * kernel decapsulates answers through its encapsulating program with UDP checksum 0, the decapsulating program counts
 * an answer carrying that nonce ({@link KernelPrograms#seen}), and this thread proves the peer. An upstream node answers
 * through its daemon, checksummed, and so stays unproven: it gets upstream's datagrams from our packet threads. A proven
 * peer that sends checksummed TCP (its kernel may no longer encapsulate to us, or a host forged it) is probed again, at
 * most once a second: its daemon's answer unproves it, its kernel's keeps it ({@link PeerProof}). One line per change
 * of a peer's state, none per datagram.
 *
 * <p>The raw socket is opened by the registering thread, so it belongs to the node's network namespace whichever
 * thread then uses it. Without CAP_NET_RAW there is no probe (one line) and no peer is proven: the kernel sends peers
 * ICMP only, the packet threads TCP and UDP.
 */
final class KernelProbe implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(KernelProbe.class);
    private static final int WAIT_MILLIS = 200;

    private final KernelPath path;
    private final IcmpSocket socket;
    private final Thread thread;
    private final SecureRandom random = new SecureRandom();
    private final byte[] payload = new byte[KernelPrograms.PROBE_NONCE_BYTES];
    private volatile boolean stopped;
    private final Map<KernelPath.Routed, PeerProof> proofs = new IdentityHashMap<>();
    /** The routed peers by overlay address (where their answers come from), for the list {@link #byOverlay} was made of. */
    private Map<Integer, KernelPath.Routed> byOverlay = Map.of();
    private List<KernelPath.Routed> byOverlayOf = List.of();
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
            LOG.warn("udp kernel probe unavailable, no peer is proven: the kernel sends peers ICMP only, the packet threads"
                    + " TCP and UDP error={}", e.getMessage());
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
                Optional<IcmpMessage> m = socket.receive(WAIT_MILLIS);
                long now = System.nanoTime();
                if (m.isPresent() && m.get().kind() == IcmpMessage.Kind.ECHO_REPLY && m.get().id() == KernelPrograms.PROBE_ECHO_ID) {
                    answered(IcmpSocket.address(m.get().from()));
                }
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

    /**
     * An echo reply of ours came from {@code overlay}: the program counted it before the kernel handed it here, so the
     * peer's answer is observed now rather than at the next tick. Only for a peer with a probe out (a flood of forged
     * replies costs one lookup each, no map read).
     */
    private void answered(int overlay) {
        KernelPath.Routed r = byOverlay.get(overlay);
        PeerProof s = r != null ? proofs.get(r) : null;
        if (s != null && s.awaiting()) {
            observe(r, s);
        }
    }

    private void tick(long now) throws NetlinkException {
        path.checkGpe(now);
        List<KernelPath.Routed> peers = path.routedPeerList();
        if (peers != byOverlayOf) {
            Map<Integer, KernelPath.Routed> m = new HashMap<>();
            for (KernelPath.Routed r : peers) {
                m.put(r.peer().subnet().address(), r);
            }
            proofs.keySet().retainAll(m.values());
            byOverlay = m;
            byOverlayOf = peers;
        }
        for (KernelPath.Routed r : peers) {
            PeerProof s = proofs.computeIfAbsent(r, x -> new PeerProof());
            observe(r, s);
            if (s.due(now)) {
                probe(r, s, now);
            }
        }
    }

    private void observe(KernelPath.Routed r, PeerProof s) {
        ProofEvidence e = path.seen(r.peer());
        if (e == null) {
            return;
        }
        PeerProof.Change c = s.observe(e);
        if (s.unwritten() && path.writeProof(r, s.proven(), s.nonce())) { // refused or replaced: tried again next tick
            s.written(s.proven());
        }
        Peer p = r.peer();
        if (c == PeerProof.Change.PROVEN) {
            LOG.info("udp kernel peer proven, the kernel sends it everything subnet={} publicIp={} why=its kernel answered"
                    + " the probe's nonce", p.subnet(), p.endpoint().getAddress().getHostAddress());
        } else if (c == PeerProof.Change.UNPROVEN) {
            LOG.info("udp kernel peer unproven, TCP and UDP to it from the packet threads subnet={} publicIp={} why=its"
                    + " daemon answered the probe's nonce (its kernel no longer encapsulates to us)", p.subnet(),
                    p.endpoint().getAddress().getHostAddress());
        }
    }

    /** A fresh nonce into the peer's proof entry, then the echo carrying it. */
    private void probe(KernelPath.Routed r, PeerProof s, long now) {
        long nonce;
        do {
            nonce = random.nextLong();
        } while (nonce == 0);
        s.probed(now, nonce);
        if (!path.writeProof(r, s.proven(), nonce)) {
            return; // entries replaced or the kernel refused: the next due probe tries again
        }
        s.written(s.proven());
        ByteBuffer.wrap(payload).putLong(0, nonce); // big-endian, as KernelPath#proofValue writes it
        try {
            socket.sendEcho(r.peer().subnet().address(), KernelPrograms.PROBE_ECHO_ID, seq++ & 0xffff, payload);
        } catch (NetlinkException e) {
            LOG.debug("udp kernel probe not sent subnet={} error={}", r.peer().subnet(), e.getMessage());
        }
    }

    @Override
    public void close() throws InterruptedException {
        stopped = true;
        thread.join(2_000);
        socket.close();
    }
}
