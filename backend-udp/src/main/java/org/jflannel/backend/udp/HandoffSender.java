package org.jflannel.backend.udp;

import java.nio.ByteBuffer;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;
import org.jflannel.backend.udp.UdpCounters.Drop;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.socket.IoVec;
import org.jflannel.linuxnet.socket.UdpBatchSocket;
import org.jflannel.packet.Ipv4;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * For comparison only ({@code JFLANNEL_UDP_TX_HANDOFF=on}): the design this backend had before, a
 * hand-off from the TUN thread to a sender thread ({@code udp-tx-<i>}): each send is gathered into
 * one of {@link #SLOTS} preallocated buffers (a copy) and queued; the sender thread makes the
 * system call. The default sends from the TUN thread itself ({@link TunReader}), which the
 * benchmark compares against this.
 */
final class HandoffSender implements TunReader.Out, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(HandoffSender.class);
    static final int SLOTS = 32;

    private record Item(int slot, int length, int segmentSize, int address, int port) {
    }

    private final UdpBatchSocket socket;
    private final PacketPath path;
    private final ByteBuffer[] slots = new ByteBuffer[SLOTS];
    private final IoVec[] vecs = new IoVec[SLOTS];
    private final BlockingQueue<Integer> free = new ArrayBlockingQueue<>(SLOTS);
    private final BlockingQueue<Item> queue = new ArrayBlockingQueue<>(SLOTS);
    private final Thread thread;
    private volatile boolean stopped;

    HandoffSender(UdpBatchSocket socket, int index, PacketPath path) {
        this.socket = socket;
        this.path = path;
        for (int i = 0; i < SLOTS; i++) {
            slots[i] = ByteBuffer.allocateDirect(TunReader.GSO_BYTES);
            vecs[i] = new IoVec(1);
            free.add(i);
        }
        this.thread = new Thread(this::loop, "udp-tx-" + index);
        this.thread.setDaemon(true);
        this.thread.start();
    }

    @Override
    public boolean send(IoVec iov, int from, int count, int segmentSize, int address, int port) {
        Integer slot;
        try {
            slot = free.poll(TunReader.POLL_MILLIS, TimeUnit.MILLISECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
        if (slot == null) {
            return false;
        }
        ByteBuffer b = slots[slot].clear();
        iov.gather(from, count, b); // the copy into one buffer is what a hand-off costs
        queue.add(new Item(slot, b.position(), segmentSize, address, port));
        return true;
    }

    private void loop() {
        while (!stopped) {
            try {
                Item it = queue.poll(TunReader.POLL_MILLIS, TimeUnit.MILLISECONDS);
                if (it == null) {
                    continue;
                }
                try {
                    IoVec v = vecs[it.slot()].clear().add(slots[it.slot()], 0, it.length());
                    if (!socket.send(v, 0, 1, it.segmentSize(), it.address(), it.port())) {
                        path.drop(Drop.SEND_FAILED, "packets to peer dropped reason=socket-buffer-full address={}",
                                Ipv4.describe(it.address()));
                    }
                } finally {
                    free.add(it.slot());
                }
            } catch (NetlinkException e) {
                path.drop(Drop.SEND_FAILED, "packets to peer dropped reason=send-failed error={}", e.getMessage());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }

    @Override
    public void close() {
        stopped = true;
        PacketThreads.awaitStop(thread, LOG, "handoff sender", "socket=" + socket);
        LOG.debug("handoff sender stopped socket={}", socket);
    }
}
