package org.jflannel.linuxnet.netlink;

import static org.jflannel.linuxnet.netlink.Rtnl.*;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Consumer;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.internal.LibC;
import org.jflannel.linuxnet.internal.NetlinkSocket;

/**
 * One request at a time over a netlink socket: a sequence number per request, then read until the
 * kernel's ACK (NLMSG_ERROR) or NLMSG_DONE for that sequence, collecting replies on the way.
 * Buffers are direct and reused, so a replace costs no allocation when it succeeds.
 */
final class NlChannel implements AutoCloseable {
    /** Decodes one reply payload; returns null to skip it. */
    interface Decoder<T> {
        T decode(int type, ByteBuffer buf, int payloadOffset, int payloadLength);
    }

    /** One request of a pipelined batch: message type, flags (NLM_F_ACK included) and body. */
    interface Pipelined {
        int type();

        int flags();

        /** Writes the family header and attributes after the nlmsghdr. */
        void encode(NlWriter w);
    }

    static final int TX_SIZE = 16 * 1024;
    /** A pipelined window's datagram; well under the default socket send buffer (wmem_default ≈ 208 KiB). */
    static final int BATCH_TX_SIZE = 64 * 1024;
    /** Largest request a batch may carry (neighbour, FDB and route messages are under 100 bytes). */
    private static final int MAX_BATCH_REQUEST = 1024;
    /**
     * Requests per window. Every request gets its own answer datagram, queued on our socket while the
     * kernel works through the window inside sendmsg; an answer costs ~1 KiB of receive buffer
     * (skb truesize), an error answer echoing the request a little more. 256 of them stay far below
     * our SO_RCVBUF (1 MiB, doubled by the kernel), so no answer is dropped (ENOBUFS).
     */
    static final int WINDOW = 256;
    static final int RX_SIZE = 256 * 1024;
    private static final int MAX_DUMP_RETRIES = 5;

    private final NetlinkSocket socket;
    private final ByteBuffer tx = ByteBuffer.allocateDirect(TX_SIZE).order(ByteOrder.nativeOrder());
    private final ByteBuffer rx = ByteBuffer.allocateDirect(RX_SIZE).order(ByteOrder.nativeOrder());
    private final long txAddress = LibC.address(tx);
    private final long rxAddress = LibC.address(rx);
    private final NlWriter writer = new NlWriter(tx);
    private ByteBuffer batchTx;
    private long batchTxAddress;
    private NlWriter batchWriter;
    private int seq = (int) (System.nanoTime() & 0x3fffffff);
    private String lastKernelMessage = "";
    private boolean dumpInterrupted;

    NlChannel(NetlinkSocket socket) {
        this.socket = socket;
    }

    /** Starts the next request; append the family header and attributes, then call a run method. */
    NlWriter request(int type, int flags) {
        return writer.begin(type, flags | NLM_F_REQUEST, ++seq);
    }

    /** The kernel's extended-ack text of the last failed request. */
    String lastKernelMessage() {
        return lastKernelMessage;
    }

    /** Sends the request (which must carry NLM_F_ACK) and returns 0 or the errno of the kernel's answer. */
    int execute() throws NetlinkException {
        return execute(null, null);
    }

    /** Like {@link #execute()}, collecting replies that come before the ACK (e.g. RTM_GETLINK, route get). */
    <T> int execute(Decoder<T> decoder, List<T> out) throws NetlinkException {
        return exchange(decoder, out, "rtnetlink request");
    }

    /**
     * Pipelines {@code requests}: windows of up to {@link #WINDOW} messages, each window sent as one
     * datagram, then its answers read and matched by sequence number before the next window goes.
     * {@code errnos[i]} / {@code messages[i]} receive request i's errno (0 = success) and
     * extended-ack text. The kernel handles every message of a datagram even when one fails.
     */
    void pipeline(List<? extends Pipelined> requests, int[] errnos, String[] messages) throws NetlinkException {
        if (batchTx == null) {
            batchTx = ByteBuffer.allocateDirect(BATCH_TX_SIZE).order(ByteOrder.nativeOrder());
            batchTxAddress = LibC.address(batchTx);
            batchWriter = new NlWriter(batchTx);
        }
        int i = 0;
        while (i < requests.size()) {
            batchTx.clear();
            int first = i;
            int firstSeq = seq + 1;
            while (i < requests.size() && i - first < WINDOW && batchTx.remaining() >= MAX_BATCH_REQUEST) {
                Pipelined r = requests.get(i++);
                batchWriter.append(r.type(), r.flags() | NLM_F_REQUEST, ++seq);
                r.encode(batchWriter);
                batchWriter.endMessage();
            }
            batchTx.flip();
            socket.send(batchTx, batchTxAddress, "rtnetlink batch of " + (i - first));
            AckCollector acks = new AckCollector(firstSeq, i - first, errnos, messages, first);
            while (acks.pending() > 0) {
                acks.accept(rx, receive());
            }
        }
    }

    /**
     * Sends a dump request ({@code header} writes the family header and filters) and decodes every
     * multipart reply until NLMSG_DONE; an interrupted dump (NLM_F_DUMP_INTR) is restarted.
     */
    <T> List<T> dump(int type, Consumer<NlWriter> header, Decoder<T> decoder) throws NetlinkException {
        for (int attempt = 0; ; attempt++) {
            header.accept(request(type, NLM_F_DUMP));
            List<T> out = new ArrayList<>();
            dumpInterrupted = false;
            int errno = dumpOnce(decoder, out);
            if (errno != 0) {
                throw new NetlinkException(typeName(type), "dump", errno, lastKernelMessage);
            }
            if (!dumpInterrupted || attempt >= MAX_DUMP_RETRIES) {
                return out;
            }
        }
    }

    private <T> int dumpOnce(Decoder<T> decoder, List<T> out) throws NetlinkException {
        return exchange(decoder, out, "rtnetlink dump");
    }

    /**
     * Sends the prepared message and reads until its ACK (NLMSG_ERROR) or NLMSG_DONE, collecting the
     * replies before it: 0, or the kernel's errno. DUMP_INTR only ever comes on dump replies, and a
     * request's DONE carries 0, so one loop serves requests and dumps.
     */
    private <T> int exchange(Decoder<T> decoder, List<T> out, String what) throws NetlinkException {
        socket.send(writer.finish(), txAddress, what);
        int want = seq;
        while (true) {
            int n = receive();
            for (int at = 0; at + NlWriter.HDRLEN <= n; ) {
                int len = rx.getInt(at);
                int type = rx.getShort(at + 4) & 0xffff;
                int flags = rx.getShort(at + 6) & 0xffff;
                if (len < NlWriter.HDRLEN || at + len > n) {
                    break;
                }
                if (rx.getInt(at + 8) == want) {
                    dumpInterrupted |= (flags & NLM_F_DUMP_INTR) != 0;
                    if (type == NLMSG_ERROR) {
                        return errorOf(at, len, flags);
                    }
                    if (type == NLMSG_DONE) {
                        int err = len >= NlWriter.HDRLEN + 4 ? rx.getInt(at + NlWriter.HDRLEN) : 0;
                        return -err;
                    }
                    collect(decoder, out, type, at, len);
                }
                at += (len + 3) & ~3;
            }
        }
    }

    private <T> void collect(Decoder<T> decoder, List<T> out, int type, int at, int len) {
        if (decoder == null || type < RTM_NEWLINK) {
            return;
        }
        T t = decoder.decode(type, rx, at + NlWriter.HDRLEN, len - NlWriter.HDRLEN);
        if (t != null) {
            out.add(t);
        }
    }

    private int receive() throws NetlinkException {
        int n;
        do {
            n = socket.receive(rx, rxAddress, "rtnetlink reply");
        } while (n < 0);
        return n;
    }

    private int errorOf(int at, int len, int flags) {
        int errno = NlErrors.errno(rx, at);
        lastKernelMessage = errno != 0 ? NlErrors.kernelMessage(rx, at, len, flags) : "";
        return errno;
    }

    @Override
    public void close() {
        socket.close();
    }
}
