package org.jflannel.backend.udp;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.util.EnumSet;
import java.util.Objects;
import org.jflannel.core.Backend;
import org.jflannel.core.BackendConfig;
import org.jflannel.core.ConfigException;
import org.jflannel.core.ExternalInterface;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseAttrs;
import org.jflannel.core.NetConf;
import org.jflannel.core.SubnetManager;
import org.jflannel.linuxnet.IpPrefix;
import org.jflannel.linuxnet.Link;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.Route;
import org.jflannel.linuxnet.RtNetlink;
import org.jflannel.linuxnet.TunDevice;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The UDP backend (REFERENCE §7).
 *
 * <p>Design note: the kernel routes the whole cluster {@code Network} into the TUN {@code flannel0};
 * the daemon reads each packet, finds the peer whose subnet holds the destination (longest-prefix
 * match), and sends the bare IP packet as one datagram to that peer's {@code PublicIP:Port}; the
 * peer writes it into its own TUN. Unlike VXLAN there is no kernel state per peer: the peer table
 * lives here, so traffic stops with the daemon. Wire format and port stay upstream's, so mixed
 * clusters work.
 *
 * <p>Speed (DESIGN §6): flannel0 is opened with IFF_VNET_HDR and TSO, so one read returns up to
 * 64 KB of a TCP flow, which {@link TcpSegmenter} cuts and the socket sends with UDP GSO; the
 * receiving side merges a flow's segments back into one GSO write ({@link TcpCoalescer}). Sends
 * leave in {@code sendmmsg} batches ({@link Outbox}), reads come in {@code recvmmsg} batches.
 *
 * <p>{@link #register} must run in the network namespace the devices belong in: the TUN, the
 * netlink socket and the UDP socket are created by the calling thread.
 */
public final class UdpBackend implements Backend {
    private static final Logger LOG = LoggerFactory.getLogger(UdpBackend.class);
    /** 20 bytes outer IPv4 header + 8 bytes UDP header. */
    static final int ENCAP_OVERHEAD = 28;
    static final String DEVICE_PATTERN = "flannel%d";

    private final ExternalInterface ext;
    private final boolean offload;

    public UdpBackend(ExternalInterface ext) {
        this(ext, true);
    }

    /**
     * @param offload open flannel0 with IFF_VNET_HDR and TSO/checksum offloads, so a read returns up
     *                to 64 KB of one TCP flow, cut here and sent with UDP GSO (DESIGN §6); false:
     *                one packet per read, as upstream
     */
    public UdpBackend(ExternalInterface ext, boolean offload) {
        this.ext = Objects.requireNonNull(ext, "ext");
        this.offload = offload;
    }

    @Override
    public UdpNetwork register(NetConf conf, SubnetManager subnets)
            throws IOException, InterruptedException, ConfigException {
        int port = port(conf);
        checkIpv4Only(conf);
        int mtu = ext.mtu() - ENCAP_OVERHEAD;
        LOG.info("UDP config: Port={} interface={} mtu={}", port, ext.name(), mtu);
        Lease lease = subnets.acquireLease(new LeaseAttrs(ext.publicIp(), null, "", null, null));
        if (lease.subnet() == null) {
            throw new IOException("acquired lease " + lease.key() + " has no IPv4 subnet");
        }
        EnumSet<TunDevice.Flag> flags = EnumSet.of(TunDevice.Flag.TUN, TunDevice.Flag.NO_PI);
        if (offload) {
            flags.add(TunDevice.Flag.VNET_HDR);
        }
        TunDevice tun = TunDevice.open(DEVICE_PATTERN, flags);
        UdpSocket socket = null;
        try {
            if (offload) {
                enableOffloads(tun);
            }
            configure(tun, lease, conf, mtu);
            PacketPath path = new PacketPath(new UdpCounters());
            socket = UdpSocket.bind(new InetSocketAddress(ext.address(), port), ext.mtu(), new TunWriter(tun, offload, path));
            TunReader reader = TunReader.start(tun, offload, path, socket);
            UdpNetwork network = new UdpNetwork(lease, mtu, port, tun, socket, reader, path);
            LOG.info("udp network registered lease={} dev={} mtu={} bind={}:{} offload={}", lease.key(), tun.name(), mtu,
                    ext.address().getHostAddress(), port, offload);
            return network;
        } catch (IOException | RuntimeException | InterruptedException e) {
            if (socket != null) {
                socket.close();
            }
            tun.close();
            throw e;
        }
    }

    /** TSO4 + checksum offload; a kernel that refuses leaves whole packets (the virtio_net_hdr stays, all zero). */
    private static void enableOffloads(TunDevice tun) {
        try {
            tun.setOffload(TunDevice.TUN_F_CSUM | TunDevice.TUN_F_TSO4);
        } catch (NetlinkException e) {
            LOG.warn("udp offloads refused, one packet per read dev={} error={}", tun.name(), e.getMessage());
        }
    }

    static int port(NetConf conf) throws ConfigException {
        if (!(conf.backend() instanceof BackendConfig.Udp cfg)) {
            throw new ConfigException("Backend.Type", "udp backend cannot run Backend.Type " + conf.backend().type());
        }
        return cfg.port();
    }

    private void checkIpv4Only(NetConf conf) throws ConfigException {
        if (conf.enableIPv6()) {
            throw new ConfigException("EnableIPv6", "the udp backend supports IPv4 only; set EnableIPv6 to false");
        }
        if (!conf.enableIPv4() || conf.network() == null) {
            throw new ConfigException("Network", "the udp backend needs an IPv4 Network");
        }
        if (ext.address() == null) {
            throw new ConfigException("EnableIPv4", "interface " + ext.name() + " has no IPv4 address");
        }
    }

    /** Address {@code <subnet IP>/32}, MTU, up, then the route {@code Network dev flannel0} (REFERENCE §7). */
    private static void configure(TunDevice tun, Lease lease, NetConf conf, int mtu) throws NetlinkException {
        try (RtNetlink nl = RtNetlink.open()) {
            Link link = nl.link(tun.name()).orElseThrow(() ->
                    new NetlinkException("RTM_GETLINK", tun.name(), 19, "tun device vanished after open"));
            int index = link.index();
            nl.setMtu(index, mtu);
            nl.replaceAddress(index, new IpPrefix(lease.subnet().inetAddress(), 32));
            nl.setUp(index);
            // replace, not add: same effect as upstream's add-and-ignore-EEXIST, and a stale route to another device is fixed
            nl.replaceRoute(Route.device(new IpPrefix(conf.network().inetAddress(), conf.network().prefixLength()), index));
        }
    }
}
