package org.jflannel.linuxnet.netlink;

import static org.jflannel.linuxnet.netlink.Rtnl.*;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Set;
import java.util.function.Consumer;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.internal.Errno;
import org.jflannel.linuxnet.internal.LibC;
import org.jflannel.linuxnet.internal.NetlinkSocket;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Change events of the rtnetlink multicast groups, read by one named platform thread that this
 * class owns and stops in {@link #close()}. The socket belongs to the network namespace of the
 * thread that called {@link #start}. A kernel overrun (ENOBUFS: events were lost) is logged; callers
 * that must not miss state reconcile with a dump.
 */
public final class NetlinkMonitor implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(NetlinkMonitor.class);
    private static final int POLL_MILLIS = 200;
    private static final int RCVBUF = 8 << 20;

    public enum Group {
        LINK(RTMGRP_LINK), ADDRESS(RTMGRP_IPV4_IFADDR | RTMGRP_IPV6_IFADDR), NEIGHBOUR(RTMGRP_NEIGH),
        IPV4_ROUTE(RTMGRP_IPV4_ROUTE), IPV6_ROUTE(RTMGRP_IPV6_ROUTE);

        final int mask;

        Group(int mask) {
            this.mask = mask;
        }
    }

    private final NetlinkSocket socket;
    private final Consumer<NetlinkEvent> sink;
    private final Thread thread;
    private volatile boolean running = true;

    private NetlinkMonitor(NetlinkSocket socket, String threadName, Consumer<NetlinkEvent> sink) {
        this.socket = socket;
        this.sink = sink;
        this.thread = new Thread(this::loop, threadName);
        this.thread.setDaemon(true);
    }

    public static NetlinkMonitor start(String threadName, Set<Group> groups, Consumer<NetlinkEvent> sink)
            throws NetlinkException {
        if (groups.isEmpty()) {
            throw new IllegalArgumentException("netlink monitor " + threadName + ": no groups");
        }
        int mask = 0;
        for (Group g : groups) {
            mask |= g.mask;
        }
        NetlinkSocket socket = NetlinkSocket.open(mask, RCVBUF, false);
        try {
            socket.setReceiveTimeoutMillis(POLL_MILLIS);
        } catch (NetlinkException e) {
            socket.close();
            throw e;
        }
        NetlinkMonitor m = new NetlinkMonitor(socket, threadName, sink);
        m.thread.start();
        LOG.info("netlink monitor started thread={} groups={}", threadName, groups);
        return m;
    }

    private void loop() {
        ByteBuffer rx = ByteBuffer.allocateDirect(NlChannel.RX_SIZE).order(ByteOrder.nativeOrder());
        long address = LibC.address(rx);
        while (running) {
            int n;
            try {
                n = socket.receive(rx, address, "netlink events");
            } catch (NetlinkException e) {
                if (!running) {
                    return;
                }
                if (e.errno() == Errno.ENOBUFS) {
                    LOG.warn("netlink monitor overrun thread={} (events lost; reconcile)", thread.getName());
                    continue;
                }
                LOG.error("netlink monitor stopped thread={} error={}", thread.getName(), e.getMessage());
                return;
            }
            for (int at = 0; at + NlWriter.HDRLEN <= n; ) {
                int len = rx.getInt(at);
                if (len < NlWriter.HDRLEN || at + len > n) {
                    break;
                }
                deliver(EventCodec.decode(rx.getShort(at + 4) & 0xffff, rx, at + NlWriter.HDRLEN, len - NlWriter.HDRLEN));
                at += (len + 3) & ~3;
            }
        }
    }

    private void deliver(NetlinkEvent event) {
        if (event == null) {
            return;
        }
        try {
            sink.accept(event);
        } catch (RuntimeException e) {
            LOG.error("netlink event sink failed event={}", event, e);
        }
    }

    /** Stops the thread (within one poll interval) and closes the socket. */
    @Override
    public void close() {
        running = false;
        if (Thread.currentThread() != thread) {
            try {
                thread.join(5_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        socket.close();
    }
}
