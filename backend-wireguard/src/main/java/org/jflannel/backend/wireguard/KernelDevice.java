package org.jflannel.backend.wireguard;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.jflannel.backend.wireguard.protocol.AllowedIp;
import org.jflannel.backend.wireguard.protocol.Endpoint;
import org.jflannel.core.Ip4Net;
import org.jflannel.core.Ip6Net;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.netlink.IpPrefix;
import org.jflannel.linuxnet.netlink.Link;
import org.jflannel.linuxnet.netlink.Route;
import org.jflannel.linuxnet.netlink.RtNetlink;
import org.jflannel.linuxnet.netlink.WireguardGenl;
import org.jflannel.linuxnet.netlink.WireguardNetlink;
import org.jflannel.linuxnet.netlink.WireguardPeerState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Kernel mode: one device as upstream's {@code pkg/backend/wireguard/device.go} makes it, where the kernel
 * has WireGuard. The {@code wireguard} generic netlink family resolved (which loads the module), a link of
 * kind {@code wireguard} through rtnetlink (a leftover of that name deleted first, as upstream), its MTU,
 * then through the family the private key, the listen port and an empty peer table; {@link #addressAndRoute}
 * gives it upstream's address, route and up;
 * peers go in and out one request each (allowed IPs replaced, as upstream's {@code ReplaceAllowedIPs}).
 * The kernel does the rest: handshakes, timers, the data path. {@link #close} deletes the device, as
 * upstream does when it stops.
 *
 * <p>A restart therefore makes a new device without sessions, while each peer's kernel still holds one
 * with the old device and sends on it (dropped here) until its own timers initiate again, ~15 s later.
 * So a peer new to this device gets one datagram through the device at once ({@link #nudge}: a byte to the
 * discard port of its allowed IPs' first address, upstream's address of the peer's device): with no session
 * the kernel holds the packet and initiates a handshake, which moves the peer to a new session.
 */
final class KernelDevice implements PeerTable, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(KernelDevice.class);
    private static final int ENODEV = 19;

    private static final int DISCARD_PORT = 9;

    private final String name;
    /** Both opened where the device was made: later requests reach its namespace from any thread. */
    private final RtNetlink rtnl;
    private final WireguardNetlink genl;
    /** Opened where the device was made too, so its datagrams take that namespace's routes (through the device). */
    private final DatagramChannel nudges;
    private final Set<String> keys = new HashSet<>();

    private KernelDevice(String name, RtNetlink rtnl, WireguardNetlink genl, DatagramChannel nudges) {
        this.name = name;
        this.rtnl = rtnl;
        this.genl = genl;
        this.nudges = nudges;
    }

    /**
     * Creates and keys the device of {@code spec}, in the calling thread's network namespace. A
     * {@link NetlinkException} for which {@link #absent} holds when the kernel has no WireGuard;
     * nothing is left behind on failure.
     */
    static KernelDevice create(WgLayout.Spec spec, byte[] privateKey, int mtu) throws NetlinkException {
        // the family first: its lookup loads the module where there is one, and where there is none
        // nothing has been touched (no device of that name deleted)
        WireguardNetlink genl = WireguardNetlink.open();
        RtNetlink nl = null;
        DatagramChannel nudges = null;
        try {
            nudges = openNudges(spec.name());
            nl = RtNetlink.open();
            nl.deleteLink(spec.name()); // upstream removes a device of that name first (a restart's leftover)
            nl.createWireguard(spec.name());
            try {
                Link link = nl.link(spec.name()).orElseThrow(() ->
                        new NetlinkException("RTM_GETLINK", spec.name(), ENODEV, "wireguard device vanished after creation"));
                nl.setMtu(link.index(), mtu);
                genl.setDevice(spec.name(), privateKey, spec.port(), WireguardGenl.WGDEVICE_F_REPLACE_PEERS, List.of());
                return new KernelDevice(spec.name(), nl, genl, nudges);
            } catch (NetlinkException | RuntimeException e) {
                nl.deleteLink(spec.name());
                throw e;
            }
        } catch (NetlinkException | RuntimeException e) {
            if (nl != null) {
                nl.close();
            }
            closeQuietly(nudges);
            genl.close();
            throw e;
        }
    }

    private static DatagramChannel openNudges(String dev) throws NetlinkException {
        try {
            return DatagramChannel.open();
        } catch (IOException e) {
            throw new NetlinkException("socket(AF_INET, SOCK_DGRAM)", dev, 0, e.getMessage());
        }
    }

    private static void closeQuietly(DatagramChannel c) {
        if (c != null) {
            try {
                c.close();
            } catch (IOException e) {
                LOG.debug("wireguard nudge socket close failed error={}", e.getMessage());
            }
        }
    }

    /** True when {@code e} says the kernel has no WireGuard: the link kind unknown, or the family missing. */
    static boolean absent(NetlinkException e) {
        return (e.operation().equals("RTM_NEWLINK") && e.errnoName().equals("EOPNOTSUPP"))
                || (e.operation().equals("CTRL_CMD_GETFAMILY") && e.errnoName().equals("ENOENT"));
    }

    String name() {
        return name;
    }

    /** Upstream's {@code Configure}: the lease subnet's own address ({@code own}), up, and the route of the whole Network through it. */
    void addressAndRoute(IpPrefix own, IpPrefix network) throws NetlinkException {
        int index = rtnl.link(name).orElseThrow(() ->
                new NetlinkException("RTM_GETLINK", name, ENODEV, "wireguard device vanished")).index();
        rtnl.replaceAddress(index, own);
        rtnl.setUp(index);
        rtnl.replaceRoute(Route.device(network, index));
    }

    @Override
    public synchronized void setPeer(byte[] publicKey, byte[] psk, Endpoint endpoint, List<AllowedIp> allowedIps,
            int keepaliveSeconds) throws NetlinkException {
        List<IpPrefix> ips = allowedIps.stream().map(KernelDevice::prefix).toList();
        genl.setDevice(name, null, 0, 0, List.of(new WireguardGenl.PeerSpec(publicKey, psk, address(endpoint), endpoint.port(),
                keepaliveSeconds, ips, WireguardGenl.WGPEER_F_REPLACE_ALLOWEDIPS)));
        if (keys.add(java.util.Base64.getEncoder().encodeToString(publicKey)) && !ips.isEmpty()) {
            nudge(ips.stream().filter(ip -> ip.address().getAddress().length == 4).findFirst().orElse(ips.get(0)), publicKey);
        }
    }

    /** One byte to {@code to}'s first address through the device: the kernel, with no session for it, initiates a handshake. */
    private void nudge(IpPrefix to, byte[] publicKey) {
        try {
            nudges.send(ByteBuffer.wrap(new byte[] {0}), new InetSocketAddress(to.address(), DISCARD_PORT));
            LOG.debug("wireguard handshake nudged dev={} publicKey={} to={}", name,
                    java.util.Base64.getEncoder().encodeToString(publicKey), to.address().getHostAddress());
        } catch (IOException e) {
            // the peer's own timers still bring the session up, 15 s later
            LOG.warn("wireguard handshake nudge failed dev={} publicKey={} to={} error={}", name,
                    java.util.Base64.getEncoder().encodeToString(publicKey), to.address().getHostAddress(), e.getMessage());
        }
    }

    @Override
    public synchronized void removePeer(byte[] publicKey) throws NetlinkException {
        genl.setDevice(name, null, 0, 0, List.of(new WireguardGenl.PeerSpec(publicKey, null, null, 0, 0, List.of(),
                WireguardGenl.WGPEER_F_REMOVE_ME)));
        keys.remove(java.util.Base64.getEncoder().encodeToString(publicKey));
    }

    @Override
    public synchronized int peers() {
        return keys.size();
    }

    /** The kernel's own view of the peers: a {@code WG_CMD_GET_DEVICE} dump, what {@code wg show dump} reads. */
    @Override
    public List<PeerStats> stats() throws NetlinkException {
        return genl.getDevice(name).peers().stream().map(KernelDevice::stats).toList();
    }

    static PeerStats stats(WireguardPeerState p) {
        InetSocketAddress e = p.endpoint();
        return new PeerStats(p.publicKey(), e == null ? null : Endpoint.of(e.getAddress(), e.getPort()), p.lastHandshakeEpochNanos(),
                p.rxBytes(), p.txBytes());
    }

    static InetAddress address(Endpoint e) {
        return e.ipv4() ? Ip4Net.toInet(e.address()) : Ip6Net.toInet(e.high(), e.low());
    }

    static IpPrefix prefix(AllowedIp a) {
        return new IpPrefix(a.ipv6() ? Ip6Net.toInet(a.high(), a.low()) : Ip4Net.toInet(a.address()), a.prefixLength());
    }

    /** Deletes the device (its peers, address and routes with it), as upstream does on shutdown. */
    @Override
    public void close() {
        genl.close();
        closeQuietly(nudges);
        try {
            rtnl.deleteLink(name);
            LOG.info("wireguard kernel device deleted dev={}", name);
        } catch (NetlinkException e) {
            LOG.warn("wireguard kernel device delete failed dev={} error={}", name, e.getMessage());
        } finally {
            rtnl.close();
        }
    }
}
