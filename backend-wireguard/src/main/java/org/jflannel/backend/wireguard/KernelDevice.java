package org.jflannel.backend.wireguard;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.jflannel.backend.wireguard.crypto.X25519;
import org.jflannel.backend.wireguard.protocol.AllowedIp;
import org.jflannel.backend.wireguard.protocol.Endpoint;
import org.jflannel.core.Ip4Net;
import org.jflannel.core.Ip6Net;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.netlink.IpPrefix;
import org.jflannel.linuxnet.netlink.Link;
import org.jflannel.linuxnet.netlink.Route;
import org.jflannel.linuxnet.netlink.RtNetlink;
import org.jflannel.linuxnet.netlink.WireguardDeviceState;
import org.jflannel.linuxnet.netlink.WireguardGenl;
import org.jflannel.linuxnet.netlink.WireguardNetlink;
import org.jflannel.linuxnet.netlink.WireguardPeerState;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Kernel mode: one device as upstream's {@code pkg/backend/wireguard/device.go} makes it, where the kernel
 * has WireGuard. The {@code wireguard} generic netlink family resolved (which loads the module), a link of
 * kind {@code wireguard} through rtnetlink (a leftover of that name deleted first, as upstream, unless adopted), its MTU,
 * then through the family the private key, the listen port and an empty peer table; {@link #addressAndRoute}
 * gives it upstream's address, route and up;
 * peers go in and out one request each (allowed IPs replaced, as upstream's {@code ReplaceAllowedIPs}).
 * The kernel does the rest: handshakes, timers, the data path. {@link #close} leaves the device to the kernel
 * (Ours: upstream deletes it when it stops).
 *
 * <p>A leftover of our name that holds our key on our port (a stopped, SIGKILLed or crashed run's: the device and its
 * sessions outlive the daemon) is adopted instead (Ours, {@link #adoptable}): its sessions carry on, so such a restart costs the
 * pods nothing; its peers are set again from the leases, and those no lease wants are removed by the first reconcile
 * ({@link WireguardPeers#readBack}).
 *
 * <p>A restart that makes the device anew (the device gone, as after a reboot, or under a new key)
 * makes a new device without sessions, while each peer's kernel still holds one
 * with the old device and sends on it (dropped here) until its own timers initiate again, ~15 s later
 * (KEEPALIVE_TIMEOUT + REKEY_TIMEOUT after its first unanswered packet; 13.0 s measured in the kernel VM,
 * {@code EtcdWireguardKernelRestartInVm}). So a peer new to this device is nudged ({@link #nudge}): it is
 * added with a persistent keepalive of 1 s, and the kernel, turning a keepalive on for a peer that had none
 * ({@code set_peer} in {@code drivers/net/wireguard/netlink.c}), stages a keepalive at once; with no session
 * that starts a handshake, and the keepalive, sent when it completes, confirms the session to the peer, which
 * moves to it. A second request then sets the configured keepalive (0: off). Where a keepalive is configured,
 * adding the peer starts the handshake by itself.
 *
 * <p>Why not a datagram: the first nudge sent one byte through the device to the discard port of the peer's
 * first allowed IP, which the kernel should hold while it initiates. Tested in the kernel VM it started no
 * handshake: the peer's pod answered 15.05 s after the restarted node's subnet.env, the peer's own timers
 * (the cause not pinned down there: no daemon log came out of that run). The keepalive needs no route, no
 * socket and no address on the device, and does what {@code wg set … persistent-keepalive} does.
 */
final class KernelDevice implements PeerTable, AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(KernelDevice.class);
    private static final int ENODEV = 19;

    /** The keepalive a new peer is added with, for the one request before its configured one (0) is set. */
    private static final int NUDGE_KEEPALIVE_SECONDS = 1;

    private final String name;
    /** Both opened where the device was made: later requests reach its namespace from any thread. */
    private final RtNetlink rtnl;
    private final WireguardNetlink genl;
    private final Set<String> keys = new HashSet<>();
    /** The adopted leftover's index, or 0 for a device made by this run. */
    private final int adoptedIndex;

    private KernelDevice(String name, RtNetlink rtnl, WireguardNetlink genl, int adoptedIndex) {
        this.name = name;
        this.rtnl = rtnl;
        this.genl = genl;
        this.adoptedIndex = adoptedIndex;
    }

    /**
     * Creates and keys the device of {@code spec}, in the calling thread's network namespace, or adopts the
     * leftover of a run that could not delete it (see {@link #adoptable}). A {@link NetlinkException} for which
     * {@link #absent} holds when the kernel has no WireGuard; nothing is left behind on failure (an adopted
     * device stays as it was found).
     */
    static KernelDevice create(WgLayout.Spec spec, byte[] privateKey, int mtu) throws NetlinkException {
        // the family first: its lookup loads the module where there is one, and where there is none
        // nothing has been touched (no device of that name deleted)
        WireguardNetlink genl = WireguardNetlink.open();
        RtNetlink nl = null;
        try {
            nl = RtNetlink.open();
            java.util.Optional<Link> leftover = nl.link(spec.name());
            if (leftover.isPresent()) {
                Link old = leftover.get();
                WireguardDeviceState state = old.kind().equals("wireguard") ? genl.getDevice(spec.name()) : null;
                String refusal = adoptable(old.kind(), state, base64(X25519.publicKey(privateKey)), spec.port());
                if (refusal == null) {
                    nl.setMtu(old.index(), mtu);
                    KernelDevice adopted = new KernelDevice(spec.name(), nl, genl, old.index());
                    state.peers().forEach(peer -> adopted.keys.add(peer.publicKey()));
                    LOG.info("wireguard kernel device leftover adopted dev={} index={} peers={} (same key and port: its sessions"
                            + " carry on, peers no lease wants go at the first reconcile)", spec.name(), old.index(), state.peers().size());
                    return adopted;
                }
                // upstream removes a device of that name first; said in one line, since the peers' traffic stops here
                // until they rekey
                nl.deleteLink(spec.name());
                LOG.info("wireguard kernel device leftover deleted dev={} index={} kind={} reason=\"{}\"", spec.name(), old.index(),
                        old.kind(), refusal);
            }
            nl.createWireguard(spec.name());
            try {
                Link link = nl.link(spec.name()).orElseThrow(() ->
                        new NetlinkException("RTM_GETLINK", spec.name(), ENODEV, "wireguard device vanished after creation"));
                nl.setMtu(link.index(), mtu);
                genl.setDevice(spec.name(), privateKey, spec.port(), WireguardGenl.WGDEVICE_F_REPLACE_PEERS, List.of());
                return new KernelDevice(spec.name(), nl, genl, 0);
            } catch (NetlinkException | RuntimeException e) {
                nl.deleteLink(spec.name());
                throw e;
            }
        } catch (NetlinkException | RuntimeException e) {
            if (nl != null) {
                nl.close();
            }
            genl.close();
            throw e;
        }
    }

    /**
     * Why a leftover device of our name cannot be adopted, or null when it can (Ours: upstream always deletes it). A
     * SIGKILLed (or crashed, or OOM-killed) daemon leaves {@code flannel-wg} with its peers and sessions, and the kernel
     * goes on carrying the pods' traffic; deleting it would cut every peer off until the new device's handshakes
     * (0.4 s measured) or the peers' timers (15 s). It is kept when it is a WireGuard device holding our key (the
     * key file's: the peers know us by it) on our port; anything else is made anew, as upstream.
     */
    static String adoptable(String kind, WireguardDeviceState state, String publicKey, int port) {
        if (!kind.equals("wireguard")) {
            return "not a wireguard device";
        }
        if (state.publicKey() == null || !state.publicKey().equals(publicKey)) {
            return "another key";
        }
        if (state.listenPort() != port) {
            return "listen port " + state.listenPort() + ", ours " + port;
        }
        return null;
    }

    private static String base64(byte[] key) {
        return java.util.Base64.getEncoder().encodeToString(key);
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
        if (index == adoptedIndex) {
            dropOthersOfFamily(index, own, network);
        }
    }

    /**
     * An adopted device made like a new one: of {@code own}'s family, no address but {@code own} and no route but the
     * Network's and the kernel's own (an old run's lease or Network, had they changed while the daemon was down).
     */
    private void dropOthersOfFamily(int index, IpPrefix own, IpPrefix network) throws NetlinkException {
        boolean v6 = own.address() instanceof java.net.Inet6Address;
        for (org.jflannel.linuxnet.netlink.Address a : rtnl.addresses(index)) {
            if ((a.prefix().address() instanceof java.net.Inet6Address) == v6 && !a.prefix().equals(own)
                    && !a.prefix().address().isLinkLocalAddress()) {
                rtnl.deleteAddress(index, a.prefix());
                LOG.info("wireguard kernel device leftover address deleted dev={} address={}", name, a.prefix());
            }
        }
        for (Route r : rtnl.routesOf(index)) {
            if (r.dst() != null && (r.dst().address() instanceof java.net.Inet6Address) == v6 && !r.dst().equals(network)
                    && r.protocol() != Route.PROTO_KERNEL) {
                rtnl.deleteRoute(r);
                LOG.info("wireguard kernel device leftover route deleted dev={} route={}", name, r.dst());
            }
        }
    }

    @Override
    public synchronized void setPeer(byte[] publicKey, byte[] psk, Endpoint endpoint, List<AllowedIp> allowedIps,
            int keepaliveSeconds) throws NetlinkException {
        List<IpPrefix> ips = allowedIps.stream().map(KernelDevice::prefix).toList();
        String key = java.util.Base64.getEncoder().encodeToString(publicKey);
        boolean nudge = !keys.contains(key) && keepaliveSeconds == 0;
        genl.setDevice(name, null, 0, 0, List.of(new WireguardGenl.PeerSpec(publicKey, psk, address(endpoint), endpoint.port(),
                nudge ? NUDGE_KEEPALIVE_SECONDS : keepaliveSeconds, ips, WireguardGenl.WGPEER_F_REPLACE_ALLOWEDIPS)));
        keys.add(key);
        if (nudge) {
            nudge(publicKey, psk, endpoint, ips);
        }
    }

    /**
     * The peer was just added with a keepalive, which made the kernel stage one and initiate a handshake (see the
     * class comment); now its configured keepalive, off. The staged keepalive and the handshake stay.
     */
    private void nudge(byte[] publicKey, byte[] psk, Endpoint endpoint, List<IpPrefix> ips) throws NetlinkException {
        genl.setDevice(name, null, 0, 0, List.of(new WireguardGenl.PeerSpec(publicKey, psk, address(endpoint), endpoint.port(), 0, ips,
                WireguardGenl.WGPEER_F_REPLACE_ALLOWEDIPS)));
        LOG.debug("wireguard handshake nudged dev={} publicKey={}", name, java.util.Base64.getEncoder().encodeToString(publicKey));
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

    /**
     * Stops managing the device and leaves it in the kernel with its peers, sessions, address and routes (Ours, issue
     * 40: upstream deletes it on shutdown, which cuts the node's pods off until the next run's handshakes): the kernel
     * goes on carrying the pods' traffic while the daemon is down, and the next start adopts it ({@link #create}) when
     * the key and port are still ours, or deletes it as upstream does. A start under another backend deletes it
     * ({@link WireguardBackend#deleteLeftoverDevices}). As the vxlan backend leaves {@code flannel.1}.
     */
    @Override
    public void close() {
        genl.close();
        rtnl.close();
        LOG.info("wireguard kernel device kept dev={} peers={} (the kernel carries the pods' traffic until the next start adopts it)",
                name, keys.size());
    }

    /**
     * Undoes {@link #create} for a start that failed after it: a device this run made is deleted (nothing left behind),
     * an adopted one stays as it was found, still carrying the pods' traffic.
     */
    void discard() {
        if (adoptedIndex != 0) {
            close();
            return;
        }
        genl.close();
        try {
            rtnl.deleteLink(name);
            LOG.info("wireguard kernel device deleted dev={} reason=\"the start failed\"", name);
        } catch (NetlinkException e) {
            LOG.warn("wireguard kernel device delete failed dev={} error={}", name, e.getMessage());
        } finally {
            rtnl.close();
        }
    }
}
