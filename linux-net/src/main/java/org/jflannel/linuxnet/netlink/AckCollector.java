package org.jflannel.linuxnet.netlink;

import static org.jflannel.linuxnet.netlink.Rtnl.NLMSG_ERROR;

import java.nio.ByteBuffer;

/**
 * Pure: matches the kernel's answers (NLMSG_ERROR, errno 0 = ACK) to the requests of one pipelined
 * window by sequence number. A window is {@code count} requests sent with consecutive sequence
 * numbers from {@code firstSeq}; answers may come several to a datagram, and anything else on the
 * socket (other sequence numbers, repeated answers, non-error messages) is ignored.
 */
final class AckCollector {
    private final int firstSeq;
    private final int count;
    private final int[] errnos;
    private final String[] messages;
    private final int base;
    private final boolean[] seen;
    private int pending;

    /**
     * @param errnos   receives the errno of request {@code base + i} at index {@code base + i}
     * @param messages receives its extended-ack text ("" when none) at the same index
     */
    AckCollector(int firstSeq, int count, int[] errnos, String[] messages, int base) {
        this.firstSeq = firstSeq;
        this.count = count;
        this.errnos = errnos;
        this.messages = messages;
        this.base = base;
        this.seen = new boolean[count];
        this.pending = count;
    }

    /** Reads the messages in {@code rx[0, n)}; returns how many requests of the window still wait for their answer. */
    int accept(ByteBuffer rx, int n) {
        for (int at = 0; at + NlWriter.HDRLEN <= n; ) {
            int len = rx.getInt(at);
            if (len < NlWriter.HDRLEN || at + len > n) {
                break;
            }
            int type = rx.getShort(at + 4) & 0xffff;
            int flags = rx.getShort(at + 6) & 0xffff;
            int i = rx.getInt(at + 8) - firstSeq; // wraps correctly: the window is far smaller than 2^31
            if (type == NLMSG_ERROR && i >= 0 && i < count && !seen[i] && len >= NlWriter.HDRLEN + 4) {
                seen[i] = true;
                pending--;
                int errno = NlErrors.errno(rx, at);
                errnos[base + i] = errno;
                messages[base + i] = errno != 0 ? NlErrors.kernelMessage(rx, at, len, flags) : "";
            }
            at += (len + 3) & ~3;
        }
        return pending;
    }

    int pending() {
        return pending;
    }
}
