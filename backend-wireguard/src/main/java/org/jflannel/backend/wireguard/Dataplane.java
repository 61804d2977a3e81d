package org.jflannel.backend.wireguard;

import java.nio.ByteBuffer;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.jflannel.backend.wireguard.protocol.Device;
import org.jflannel.backend.wireguard.protocol.Endpoint;
import org.jflannel.backend.wireguard.protocol.HandshakeLoad;
import org.jflannel.backend.wireguard.protocol.Peer;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.socket.DatagramBatch;
import org.jflannel.linuxnet.socket.IoVec;
import org.jflannel.linuxnet.socket.UdpBatchSocket;
import org.jflannel.linuxnet.tun.TunDevice;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The userspace WireGuard's two packet threads over linux-net: {@code wg-tun-rx} reads every packet
 * queued on {@code flannel-wg} per wake-up (non-blocking reads until empty), seals each for its peer
 * and sends runs of datagrams to one peer with one {@code sendmmsg}; {@code wg-sock-rx} takes up to
 * {@value #RX_SLOTS} datagrams per {@code recvmmsg}, hands them to the {@link Device}, writes what
 * decrypts into the TUN, and runs the protocol's timers every {@value #TICK_MILLIS} ms.
 *
 * <p>Not yet (said in docs/configuration.md): TUN offloads (TSO super-packets) with UDP GSO/GRO,
 * and crypto on more than one core; today a session's packets are sealed on one thread and opened on
 * another, so two cores work, one per direction.
 */
final class Dataplane implements AutoCloseable, Device.Wire {
    private static final Logger LOG = LoggerFactory.getLogger(Dataplane.class);
    static final int RX_SLOTS = 32;
    static final int TICK_MILLIS = 100;
    private static final int POLL_MILLIS = 100;
    private static final int SLOT = 2048;
    private static final int BATCH = UdpBatchSocket.MAX_MESSAGES;

    private final TunDevice tun;
    private final UdpBatchSocket socket;
    private final HandshakeLoad load;
    private volatile Device device;
    private volatile boolean stopped;
    private final CountDownLatch done = new CountDownLatch(2);
    private final ThreadLocal<ByteBuffer> sendBuffer = ThreadLocal.withInitial(() -> ByteBuffer.allocateDirect(SLOT));
    private final ThreadLocal<IoVec> sendIov = ThreadLocal.withInitial(() -> new IoVec(1));
    private final ByteBuffer tunOut = ByteBuffer.allocateDirect(65536);
    private Thread tunThread;
    private Thread sockThread;

    Dataplane(TunDevice tun, UdpBatchSocket socket, HandshakeLoad load) {
        this.tun = tun;
        this.socket = socket;
        this.load = load;
    }

    void start(Device d) throws NetlinkException {
        this.device = d;
        tun.setNonBlocking();
        tunThread = new Thread(this::tunLoop, "wg-tun-rx");
        sockThread = new Thread(this::socketLoop, "wg-sock-rx");
        tunThread.setDaemon(true);
        sockThread.setDaemon(true);
        tunThread.start();
        sockThread.start();
    }

    // ------------------------------------------------------------ Device.Wire

    /** Handshakes, cookie replies, keepalives and staged packets: one datagram, one sendmsg. */
    @Override
    public void send(byte[] datagram, int off, int len, Endpoint to) {
        if (to == null) {
            return;
        }
        ByteBuffer b = sendBuffer.get();
        b.clear();
        b.put(0, datagram, off, len);
        IoVec iov = sendIov.get().clear().add(b, 0, len);
        try {
            socket.send(iov, 0, 1, 0, to.address(), to.port());
        } catch (NetlinkException e) {
            LOG.debug("wireguard send failed to={} error={}", to, e.getMessage());
        }
    }

    /** Socket thread only: one decrypted packet into the TUN. */
    @Override
    public void deliver(byte[] packet, int off, int len) {
        tunOut.clear();
        tunOut.put(packet, off, len).flip();
        try {
            tun.write(tunOut);
        } catch (NetlinkException e) {
            LOG.debug("wireguard tun write failed dev={} error={}", tun.name(), e.getMessage());
        }
    }

    // ------------------------------------------------------------ threads

    private void tunLoop() {
        ByteBuffer in = ByteBuffer.allocateDirect(65536);
        byte[] pkt = new byte[65536];
        ByteBuffer out = ByteBuffer.allocateDirect(BATCH * SLOT);
        byte[] sealed = new byte[SLOT];
        IoVec iov = new IoVec(BATCH);
        int[] from = new int[BATCH];
        int[] count = new int[BATCH];
        int[] seg = new int[BATCH];
        for (int i = 0; i < BATCH; i++) {
            from[i] = i;
            count[i] = 1;
        }
        Endpoint batchTo = null;
        int queued = 0;
        try {
            while (!stopped) {
                in.clear();
                int n = tun.tryRead(in);
                if (n < 0) {
                    flush(iov, from, count, seg, queued, batchTo);
                    queued = 0;
                    tun.awaitReadable(POLL_MILLIS);
                    continue;
                }
                in.get(0, pkt, 0, n);
                Device d = device;
                Peer peer = d.peerForPacket(pkt, 0, n);
                if (peer == null) {
                    continue;
                }
                if (d.sealedSize(n) > SLOT) {
                    continue; // beyond the device MTU: the kernel does not send these
                }
                int len = d.seal(peer, pkt, 0, n, sealed, 0);
                if (len == 0) {
                    continue; // staged behind a handshake
                }
                Endpoint to = peer.endpoint();
                if (queued == BATCH || (queued > 0 && !to.equals(batchTo))) {
                    flush(iov, from, count, seg, queued, batchTo);
                    queued = 0;
                }
                if (queued == 0) {
                    iov.clear();
                    batchTo = to;
                }
                out.put(queued * SLOT, sealed, 0, len);
                iov.add(out, queued * SLOT, len);
                queued++;
            }
        } catch (NetlinkException | RuntimeException e) {
            if (!stopped) {
                LOG.error("wireguard tun reader failed dev={} error={}", tun.name(), e.toString());
            }
        } finally {
            done.countDown();
        }
    }

    /** sendmmsg of the queued datagrams, all to one peer; what the kernel refuses (buffer full) is dropped, as a NIC would. */
    private void flush(IoVec iov, int[] from, int[] count, int[] seg, int queued, Endpoint to) throws NetlinkException {
        int sent = 0;
        while (sent < queued) {
            int k = socket.sendMany(iov, from, count, seg, sent, queued, to.address(), to.port());
            if (k <= 0) {
                return;
            }
            sent += k;
        }
    }

    private void socketLoop() {
        DatagramBatch batch = new DatagramBatch(RX_SLOTS, SLOT);
        byte[] msg = new byte[SLOT];
        long nextTick = System.nanoTime();
        try {
            while (!stopped) {
                int n = socket.receive(batch);
                Device d = device;
                ByteBuffer data = batch.data();
                int handshakes = 0;
                for (int i = 0; i < n; i++) {
                    byte type = data.get(batch.offset(i));
                    if (type == 1 || type == 2) {
                        handshakes++;
                    }
                }
                load.backlog(handshakes); // before the work: the cookies must start while the backlog lasts
                for (int i = 0; i < n; i++) {
                    if (batch.truncated(i)) {
                        continue;
                    }
                    int len = batch.length(i);
                    data.get(batch.offset(i), msg, 0, len);
                    d.receive(msg, 0, len, new Endpoint(batch.senderAddress(i), batch.senderPort(i)));
                }
                long now = System.nanoTime();
                if (now - nextTick >= 0) {
                    d.tick();
                    nextTick = now + TimeUnit.MILLISECONDS.toNanos(TICK_MILLIS);
                }
            }
        } catch (NetlinkException | RuntimeException e) {
            if (!stopped) {
                LOG.error("wireguard socket reader failed error={}", e.toString());
            }
        } finally {
            done.countDown();
        }
    }

    /** Stops both threads (each notices within its poll timeout), then closes the socket and the TUN. */
    @Override
    public void close() {
        stopped = true;
        try {
            if (tunThread != null && !done.await(5, TimeUnit.SECONDS)) {
                LOG.warn("wireguard packet threads did not stop within 5 s");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        socket.close();
        tun.close();
    }
}
