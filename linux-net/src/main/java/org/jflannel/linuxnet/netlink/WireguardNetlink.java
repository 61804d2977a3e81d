package org.jflannel.linuxnet.netlink;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jflannel.linuxnet.Names;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.internal.Errno;
import org.jflannel.linuxnet.internal.LibC;
import org.jflannel.linuxnet.internal.NetlinkSocket;

/**
 * The kernel's WireGuard through its generic netlink family, as upstream flannel configures
 * {@code flannel-wg} (wgctrl): the family resolved once at {@link #open()}, then {@code WG_CMD_SET_DEVICE}
 * requests ({@link WireguardGenl}'s encoding) with NLM_F_ACK, each failure a {@link NetlinkException}
 * with errno and the kernel's text. The device itself is an rtnetlink link of kind {@code wireguard}
 * ({@link RtNetlink#createWireguard}). {@link #getDevice} reads the device and its peers back (a dump).
 * Bound to the network namespace of the thread that opens it.
 * Thread-safe: requests are serialised on this object.
 */
public final class WireguardNetlink implements AutoCloseable {
    /** A request's budget, under the channel's 16 KiB buffer: peers beyond it go in further requests, as wgctrl splits them. */
    static final int MAX_REQUEST = 12 * 1024;
    private static final int EPROTO = 71;

    private final NlChannel channel;
    private final int familyId;
    private final AtomicBoolean closed = new AtomicBoolean();

    private WireguardNetlink(NlChannel channel, int familyId) {
        this.channel = channel;
        this.familyId = familyId;
    }

    /**
     * Opens a generic netlink socket and resolves the {@code wireguard} family: a
     * {@link NetlinkException} with {@code ENOENT} when the kernel has no WireGuard (module absent
     * and not loadable; creating a link of kind wireguard loads it where it exists).
     */
    public static WireguardNetlink open() throws NetlinkException {
        NlChannel channel = new NlChannel(NetlinkSocket.open(LibC.NETLINK_GENERIC, 0, 256 * 1024, false));
        try {
            return new WireguardNetlink(channel, familyId(channel, WireguardGenl.FAMILY));
        } catch (NetlinkException | RuntimeException e) {
            channel.close();
            throw e;
        }
    }

    /** The id of the generic netlink family {@code name} ({@code nlctrl} is 16 on every kernel), or ENOENT. */
    public static int familyId(String name) throws NetlinkException {
        try (NlChannel channel = new NlChannel(NetlinkSocket.open(LibC.NETLINK_GENERIC, 0, 0, false))) {
            return familyId(channel, name);
        }
    }

    private static int familyId(NlChannel channel, String name) throws NetlinkException {
        WireguardGenl.getFamily(channel.request(WireguardGenl.GENL_ID_CTRL, Rtnl.NLM_F_ACK), name);
        List<Integer> ids = new ArrayList<>(1);
        int errno = channel.execute((type, buf, at, len) -> type == WireguardGenl.GENL_ID_CTRL
                ? NlAttrs.parse(buf, at + 4, at + len).u16(WireguardGenl.CTRL_ATTR_FAMILY_ID, -1) : null, ids);
        if (errno != 0) {
            throw new NetlinkException("CTRL_CMD_GETFAMILY", name, errno, channel.lastKernelMessage());
        }
        if (ids.isEmpty() || ids.get(0) < 0) {
            throw new NetlinkException("CTRL_CMD_GETFAMILY", name, Errno.ENOENT, "no family id in the reply");
        }
        return ids.get(0);
    }

    /** The family's id on this kernel. */
    public int familyId() {
        return familyId;
    }

    /**
     * {@code WG_CMD_SET_DEVICE} on {@code ifname}: the private key and listen port when given (null / 0:
     * left as they are), {@code flags} ({@link WireguardGenl#WGDEVICE_F_REPLACE_PEERS}: the peers below
     * become the whole table), then the peers, each added or updated by its public key (or removed with
     * {@link WireguardGenl#WGPEER_F_REMOVE_ME}). Peers that do not fit one request follow in more, the
     * device flags only in the first (so a replacement keeps the later requests' peers).
     */
    public synchronized void setDevice(String ifname, byte[] privateKey, int listenPort, int flags,
            List<WireguardGenl.PeerSpec> peers) throws NetlinkException {
        Names.checkIfName("wireguard device name", ifname);
        if (privateKey != null && privateKey.length != 32) {
            throw new IllegalArgumentException("wireguard private key: expected 32 bytes, got " + privateKey.length);
        }
        if (listenPort < 0 || listenPort > 65535) {
            throw new IllegalArgumentException("wireguard listen port: expected 0..65535, got " + listenPort);
        }
        int from = 0;
        boolean first = true;
        do {
            int size = 128;
            int to = from;
            while (to < peers.size() && (to == from || size + WireguardGenl.peerSize(peers.get(to)) <= MAX_REQUEST)) {
                size += WireguardGenl.peerSize(peers.get(to));
                to++;
            }
            List<WireguardGenl.PeerSpec> part = peers.subList(from, to);
            WireguardGenl.setDevice(channel.request(familyId, Rtnl.NLM_F_ACK), ifname, first ? privateKey : null,
                    first ? listenPort : 0, first ? flags : 0, part);
            int errno = channel.execute();
            if (errno != 0) {
                throw new NetlinkException("WG_CMD_SET_DEVICE", ifname + describe(part), errno, channel.lastKernelMessage());
            }
            first = false;
            from = to;
        } while (from < peers.size());
    }

    /**
     * {@code WG_CMD_GET_DEVICE} on {@code ifname}: the device and its peers with their endpoints, last handshakes,
     * byte counts and allowed IPs ({@link WireguardDump}'s dump, retried when the kernel says a change interrupted
     * it). A {@link NetlinkException} with the kernel's errno (ENODEV: no such device), or EPROTO when the reply
     * cannot be read, naming the attribute.
     */
    public synchronized WireguardDeviceState getDevice(String ifname) throws NetlinkException {
        Names.checkIfName("wireguard device name", ifname);
        List<ByteBuffer> parts;
        try {
            parts = channel.dump(familyId, w -> WireguardDump.request(w, ifname),
                    (type, buf, at, len) -> type == familyId ? copy(buf, at, len) : null);
        } catch (NetlinkException e) {
            throw new NetlinkException("WG_CMD_GET_DEVICE", ifname, e.errno(), e.kernelMessage());
        }
        try {
            return WireguardDump.decode(parts);
        } catch (IllegalArgumentException e) {
            throw new NetlinkException("WG_CMD_GET_DEVICE", ifname, EPROTO, e.getMessage());
        }
    }

    /** One reply's payload out of the channel's reused buffer. */
    private static ByteBuffer copy(ByteBuffer buf, int at, int len) {
        byte[] b = new byte[len];
        buf.get(at, b);
        return ByteBuffer.wrap(b);
    }

    private static String describe(List<WireguardGenl.PeerSpec> peers) {
        if (peers.isEmpty()) {
            return "";
        }
        String key = java.util.Base64.getEncoder().encodeToString(peers.get(0).publicKey());
        return " peer " + key + (peers.size() > 1 ? " and " + (peers.size() - 1) + " more" : "");
    }

    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            channel.close();
        }
    }
}
