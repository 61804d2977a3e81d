package org.jflannel.flanneld.daemon;

import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.netlink.Nflog;
import org.jflannel.netpol.DenyLog;
import org.jflannel.netpol.DeniedConnections;
import org.jflannel.netpol.PolicySync;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Ours (issue 35): the connections the policy table drops, one log line each at a bounded rate. The table's chains
 * hand what they drop to NFLOG group {@link #GROUP} (within the table's own limit, {@link DenyLog}); this class binds
 * the group in the node's namespace and turns the packets into lines on its thread {@code netpol-nflog}
 * ({@link DeniedConnections}: a line per attempt, at most {@code --network-policy-log-rate} a second, what is left
 * out counted in a line per 10 s). Where the group cannot be bound (another listener holds it), one warning and no
 * lines: enforcement is the table's and does not depend on this.
 */
final class DeniedConnectionLog implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(DeniedConnectionLog.class);
    /** Our NFLOG group ("JF", 0x4a46): documented, so that an operator's ulogd can stay off it. */
    static final int GROUP = 19014;
    private static final int RECEIVE_TIMEOUT_MS = 500;

    private final Thread thread;
    private volatile boolean stop;

    private DeniedConnectionLog(Nflog nflog, DeniedConnections lines) {
        this.thread = new Thread(() -> run(nflog, lines), "netpol-nflog");
        thread.setDaemon(true);
    }

    /** The table's log setting for a rate of {@code linesPerSecond} (0: none): the kernel hands over 4 packets a line. */
    static DenyLog tableSetting(int linesPerSecond) {
        return linesPerSecond == 0 ? DenyLog.OFF : new DenyLog(GROUP, Math.max(10, linesPerSecond * 4));
    }

    /** Starts reading the group; null (after one warning) when it cannot be bound. */
    static DeniedConnectionLog start(PolicySync sync, int linesPerSecond) {
        Nflog nflog;
        try {
            nflog = Nflog.open(GROUP, DenyLog.SNAPLEN, RECEIVE_TIMEOUT_MS);
        } catch (NetlinkException e) {
            LOG.warn("network policy denied connections not logged: NFLOG group {} not bound error=\"{}\"", GROUP, e.getMessage());
            return null;
        }
        DeniedConnectionLog l = new DeniedConnectionLog(nflog, new DeniedConnections(linesPerSecond, sync::podAt, System::nanoTime));
        l.thread.start();
        LOG.info("network policy denied connections logged nflogGroup={} maxLinesPerSecond={}", GROUP, linesPerSecond);
        return l;
    }

    private void run(Nflog nflog, DeniedConnections lines) {
        long lost = 0;
        try (nflog) {
            while (!stop) {
                try {
                    for (Nflog.NflogPacket p : nflog.receive()) {
                        lines.accept(p.prefix(), p.payload()).ifPresent(LOG::info);
                    }
                } catch (NetlinkException e) {
                    if (!"ENOBUFS".equals(e.errnoName())) {
                        throw e;
                    }
                    lost++; // the socket overflowed: some packets were not handed over; the counter says so
                }
                lines.summary().ifPresent(LOG::info);
            }
        } catch (NetlinkException | RuntimeException e) {
            LOG.warn("network policy denied connections no longer logged error=\"{}\" overflows={}", e.getMessage(), lost);
        }
    }

    @Override
    public void close() {
        stop = true;
        thread.interrupt();
        try {
            thread.join(2 * RECEIVE_TIMEOUT_MS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
