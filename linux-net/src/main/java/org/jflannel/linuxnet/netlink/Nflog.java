package org.jflannel.linuxnet.netlink;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.internal.LibC;
import org.jflannel.linuxnet.internal.NetlinkSocket;

/**
 * One NFLOG group of the current network namespace (nfnetlink_log over NETLINK_NETFILTER): bound at
 * {@link #open}, in packet-copy mode with at most {@code copyRange} bytes of each packet, then read by
 * one owner thread with {@link #receive}. What an nftables rule's {@code log group N} statement sends
 * arrives here as an {@link NflogPacket}. A group has one listener per namespace: a second bind fails
 * with EBUSY (another program, e.g. ulogd, holds it). Closing the socket unbinds the group.
 */
public final class Nflog implements AutoCloseable {
    static final int NETLINK_NETFILTER = 12;
    static final int NFNL_SUBSYS_ULOG = 4;
    static final int NFULNL_MSG_PACKET = 0;
    static final int NFULNL_MSG_CONFIG = 1;
    static final int NFULA_CFG_CMD = 1;
    static final int NFULA_CFG_MODE = 2;
    static final int NFULA_CFG_TIMEOUT = 4;
    static final int NFULA_CFG_QTHRESH = 5;
    static final int NFULNL_CFG_CMD_BIND = 1;
    static final int NFULNL_COPY_PACKET = 2;
    static final int NFULA_PACKET_HDR = 1;
    static final int NFULA_PAYLOAD = 9;
    static final int NFULA_PREFIX = 10;
    static final int AF_UNSPEC = 0;
    private static final int RX_SIZE = 64 * 1024;

    /** One logged packet: its protocol family (2 IPv4, 10 IPv6), netfilter hook, the rule's prefix, the first bytes from the IP header on. */
    public record NflogPacket(int family, int hook, String prefix, byte[] payload) {
        public NflogPacket {
            payload = payload.clone();
        }

        @Override
        public byte[] payload() {
            return payload.clone();
        }
    }

    private final NetlinkSocket socket;
    private final NlChannel channel;
    private final int group;
    private final ByteBuffer rx = ByteBuffer.allocateDirect(RX_SIZE).order(ByteOrder.nativeOrder());
    private final long rxAddress = LibC.address(rx);

    private Nflog(NetlinkSocket socket, int group) {
        this.socket = socket;
        this.channel = new NlChannel(socket);
        this.group = group;
    }

    /**
     * Binds {@code group} (0..65535) in the current namespace, copying up to {@code copyRange} bytes of each packet and
     * handing them over within 100 ms (or 16 at a time); {@code receive} then waits at most {@code timeoutMillis}.
     */
    public static Nflog open(int group, int copyRange, int timeoutMillis) throws NetlinkException {
        if (group < 0 || group > 0xffff) {
            throw new IllegalArgumentException("NFLOG group: expected 0..65535, got " + group);
        }
        NetlinkSocket s = NetlinkSocket.open(NETLINK_NETFILTER, 0, 1 << 20, false);
        Nflog n = new Nflog(s, group);
        try {
            n.config("bind", w -> w.attrU8(NFULA_CFG_CMD, NFULNL_CFG_CMD_BIND));
            n.config("copy mode", w -> w.attr(NFULA_CFG_MODE, new byte[] {(byte) (copyRange >>> 24), (byte) (copyRange >>> 16),
                (byte) (copyRange >>> 8), (byte) copyRange, (byte) NFULNL_COPY_PACKET, 0}));
            n.config("timeout", w -> w.attr(NFULA_CFG_TIMEOUT, be32(10)));
            n.config("queue threshold", w -> w.attr(NFULA_CFG_QTHRESH, be32(16)));
            s.setReceiveTimeoutMillis(timeoutMillis);
            return n;
        } catch (NetlinkException | RuntimeException e) {
            n.close();
            throw e;
        }
    }

    private void config(String what, java.util.function.Consumer<NlWriter> attrs) throws NetlinkException {
        NlWriter w = channel.request((NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_CONFIG, Rtnl.NLM_F_ACK);
        w.u8(AF_UNSPEC).u8(0).u8(group >>> 8).u8(group); // nfgenmsg: family, version, res_id (the group, big-endian)
        attrs.accept(w);
        int errno = channel.execute();
        if (errno != 0) {
            throw new NetlinkException("NFULNL_MSG_CONFIG", "NFLOG group " + group + " " + what, errno, channel.lastKernelMessage());
        }
    }

    private static byte[] be32(int v) {
        return new byte[] {(byte) (v >>> 24), (byte) (v >>> 16), (byte) (v >>> 8), (byte) v};
    }

    /** The packets of the next datagram (several may come in one); empty when none came within the timeout. */
    public List<NflogPacket> receive() throws NetlinkException {
        int n = socket.receive(rx, rxAddress, "NFLOG group " + group);
        return n < 0 ? List.of() : decode(rx, n);
    }

    /**
     * The NFULNL_MSG_PACKET messages in the first {@code n} bytes of {@code buf} (host byte order); other messages and
     * anything truncated are skipped.
     */
    static List<NflogPacket> decode(ByteBuffer buf, int n) {
        List<NflogPacket> out = new ArrayList<>();
        for (int at = 0; at + NlWriter.HDRLEN <= n; ) {
            int len = buf.getInt(at);
            int type = buf.getShort(at + 4) & 0xffff;
            if (len < NlWriter.HDRLEN || at + len > n) {
                break;
            }
            int body = at + NlWriter.HDRLEN;
            if (type == ((NFNL_SUBSYS_ULOG << 8) | NFULNL_MSG_PACKET) && len >= NlWriter.HDRLEN + 4) {
                int family = buf.get(body) & 0xff;
                NlAttrs a = NlAttrs.parse(buf, body + 4, at + len);
                byte[] payload = a.bytes(NFULA_PAYLOAD);
                int hook = a.length(NFULA_PACKET_HDR) >= 3 ? buf.get(a.offset(NFULA_PACKET_HDR) + 2) & 0xff : -1;
                String prefix = a.string(NFULA_PREFIX);
                if (payload != null) {
                    out.add(new NflogPacket(family, hook, prefix == null ? "" : prefix, payload));
                }
            }
            at += (len + 3) & ~3;
        }
        return out;
    }

    @Override
    public void close() {
        channel.close();
    }
}
