package org.jflannel.backend.udp;

import io.netty.channel.Channel;
import io.netty.channel.socket.DatagramPacket;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * Datagrams handed from the TUN reader to the socket's event loop. One drain task writes everything
 * queued and flushes once, so a burst leaves in one {@code sendmmsg} instead of a syscall and a
 * wake-up per packet. When the queue or the socket is full the reader waits (briefly): the backlog
 * then builds in flannel0's queue, where the kernel drops and TCP notices at once, instead of being
 * lost silently in here.
 */
final class Outbox {
    static final int LIMIT = 1024;
    private static final int FLUSH_EVERY = 64;
    private static final long MAX_WAIT_NANOS = TimeUnit.MILLISECONDS.toNanos(5);
    private static final long PAUSE_NANOS = TimeUnit.MICROSECONDS.toNanos(20);

    private final Channel channel;
    private final Queue<DatagramPacket> queue = new ConcurrentLinkedQueue<>();
    private final AtomicInteger pending = new AtomicInteger();
    private final AtomicBoolean scheduled = new AtomicBoolean();
    private final Runnable drain = this::drain;

    Outbox(Channel channel) {
        this.channel = channel;
    }

    /** From any thread; false (packet released) when there was no room within a few milliseconds or the socket is closed. */
    boolean offer(DatagramPacket packet) {
        if (!roomWithin(MAX_WAIT_NANOS)) {
            packet.release();
            return false;
        }
        pending.incrementAndGet();
        queue.add(packet);
        if (scheduled.compareAndSet(false, true)) {
            channel.eventLoop().execute(drain);
        }
        return true;
    }

    private boolean roomWithin(long nanos) {
        long deadline = 0;
        while (pending.get() >= LIMIT || !channel.isWritable()) {
            if (!channel.isActive()) {
                return false;
            }
            long now = System.nanoTime();
            if (deadline == 0) {
                deadline = now + nanos;
            } else if (now - deadline > 0) {
                return false;
            }
            LockSupport.parkNanos(PAUSE_NANOS);
        }
        return true;
    }

    /** On the event loop. The flag is cleared before polling, so a packet queued after the last poll schedules a new drain. */
    private void drain() {
        scheduled.set(false);
        int n = 0;
        DatagramPacket p;
        while ((p = queue.poll()) != null) {
            pending.decrementAndGet();
            channel.write(p, channel.voidPromise());
            if (++n % FLUSH_EVERY == 0) {
                channel.flush();
            }
        }
        if (n % FLUSH_EVERY != 0) {
            channel.flush();
        }
    }

    /** Releases what is still queued (after the channel closed). */
    void discard() {
        DatagramPacket p;
        while ((p = queue.poll()) != null) {
            pending.decrementAndGet();
            p.release();
        }
    }
}
