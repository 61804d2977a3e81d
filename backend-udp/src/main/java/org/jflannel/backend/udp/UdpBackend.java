package org.jflannel.backend.udp;

import java.io.IOException;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jflannel.core.Backend;
import org.jflannel.core.BackendConfig;
import org.jflannel.core.ConfigException;
import org.jflannel.core.ExternalInterface;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseAttrs;
import org.jflannel.core.NetConf;
import org.jflannel.core.SubnetManager;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.netlink.IpPrefix;
import org.jflannel.linuxnet.socket.UdpBatchSocket;
import org.jflannel.linuxnet.tun.TunDevice;
import org.jflannel.packet.TcpSegmenter;
import org.jflannel.packet.TrainCoalescer;
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
 * <p>Speed (DESIGN §6, {@link UdpOptions}): flannel0 is opened with IFF_VNET_HDR and TSO, so one
 * read returns up to 64 KB of a TCP flow, which {@link TcpSegmenter} cuts and the reading thread
 * itself sends with UDP GSO ({@link TunReader}); the socket has UDP GRO, so one receive returns a
 * train of a peer's datagrams, whose TCP segments {@link TrainCoalescer} writes back to flannel0 as
 * super-packets ({@link SocketReader}). flannel0 has one queue per CPU (IFF_MULTI_QUEUE) and the
 * port as many SO_REUSEPORT sockets, each with its own reader thread. The system calls are
 * linux-net's ({@code UdpBatchSocket}, {@code TunDevice}); no Netty on the packet path.
 *
 * <p>{@link #register} must run in the network namespace the devices belong in: the TUN, the
 * netlink socket and the UDP socket are created by the calling thread.
 */
public final class UdpBackend implements Backend {
    private static final Logger LOG = LoggerFactory.getLogger(UdpBackend.class);
    /** 20 bytes outer IPv4 header + 8 bytes UDP header. */
    static final int ENCAP_OVERHEAD = 28;
    static final String DEVICE_PATTERN = "flannel%d";

    /**
     * Socket buffers (SO_RCVBUFFORCE/SO_SNDBUFFORCE): 16 MB is 25 ms at 5 Gbit/s, enough to ride out
     * a reader thread that lost its CPU for a scheduler slice or two. With 4 MB (6 ms) the receiving
     * socket dropped 3,391 GRO trains in a 4-stream run on the 2-CPU machine, and TCP retransmitted
     * 26,000 segments; with 16 MB, none and 6 (docs/benchmarks.md). The memory is only used while a
     * backlog lasts.
     */
    static final int SOCKET_BUFFER = 16 << 20;

    private final ExternalInterface ext;
    private final UdpOptions options;
    private final Map<String, String> env;

    /** The fast path as the environment sets it ({@link UdpOptions#fromEnvironment}; {@link UdpOptions#shipped()} by default). */
    public UdpBackend(ExternalInterface ext) {
        this(ext, null, System.getenv());
    }

    /**
     * @param offload open flannel0 with IFF_VNET_HDR and TSO/checksum offloads, so a read returns up
     *                to 64 KB of one TCP flow, cut here and sent with UDP GSO (DESIGN §6); false:
     *                one packet per read, as upstream (the other options at their defaults)
     */
    public UdpBackend(ExternalInterface ext, boolean offload) {
        this(ext, offload ? UdpOptions.defaults() : new UdpOptions(false, true, false, UdpOptions.defaultQueues()), Map.of());
    }

    public UdpBackend(ExternalInterface ext, UdpOptions options) {
        this(ext, Objects.requireNonNull(options, "options"), Map.of());
    }

    private UdpBackend(ExternalInterface ext, UdpOptions options, Map<String, String> env) {
        this.ext = Objects.requireNonNull(ext, "ext");
        this.options = options;
        this.env = env;
    }

    @Override
    public UdpNetwork register(NetConf conf, SubnetManager subnets)
            throws IOException, InterruptedException, ConfigException {
        int port = port(conf);
        checkIpv4Only(conf);
        UdpOptions opts = options != null ? options : UdpOptions.fromEnvironment(env);
        opts = checkGpePort(opts, port);
        int mtu = ext.mtu() - ENCAP_OVERHEAD;
        LOG.info("UDP config: Port={} interface={} mtu={} {}", port, ext.name(), mtu, opts);
        List<TunDevice> queues = openQueues(opts);
        TunDevice tun = queues.get(0);
        boolean vnetHdr = opts.offload();
        List<UdpBatchSocket> sockets = new ArrayList<>();
        List<AutoCloseable> readers = new ArrayList<>();
        // attached before the lease is published, so that the lease says truly whether we decapsulate
        KernelPath kernel = opts.kernelAttachable() ? KernelPath.open(tun.name(), ext, port, opts.kernel(), opts.gpePort()) : null;
        if (kernel != null) {
            readers.add(kernel); // closed first: the programs stop before the devices go
        }
        try {
            Lease lease = subnets.acquireLease(new LeaseAttrs(ext.publicIp(), null, "", UdpBackendData.publish(kernel != null), null));
            if (lease.subnet() == null) {
                throw new IOException("acquired lease " + lease.key() + " has no IPv4 subnet");
            }
            if (vnetHdr) {
                enableOffloads(tun);
            }
            configure(tun, lease, conf, mtu);
            if (kernel != null) {
                kernel.own(lease.subnet());
            }
            PacketPath path = new PacketPath(new UdpCounters());
            bindSockets(sockets, port, queues.size());
            UdpBatchSocket first = sockets.get(0);
            boolean gso = vnetHdr && first.gsoSupported();
            if (vnetHdr && !gso) {
                LOG.warn("udp gso unsupported by the kernel, one datagram per segment socket={}", first);
            }
            boolean gro = opts.gro();
            for (UdpBatchSocket s : sockets) {
                if (gro && !s.enableGro()) {
                    LOG.warn("udp gro refused by the kernel, one datagram per receive slot socket={}", s);
                    gro = false;
                }
            }
            for (int i = 0; i < sockets.size(); i++) {
                readers.add(SocketReader.start(sockets.get(i), i, queues.get(i % queues.size()), vnetHdr, gro,
                        opts.coalesce(), opts.verifyChecksums(), ext.mtu(), mtu, path));
            }
            for (int i = 0; i < queues.size(); i++) {
                UdpBatchSocket s = sockets.get(i % sockets.size());
                TunReader.Out out = TunReader.Out.of(s);
                if (opts.txHandoff()) {
                    HandoffSender h = new HandoffSender(s, i, path);
                    readers.add(h);
                    out = h;
                }
                readers.add(TunReader.start(queues.get(i), i, vnetHdr, gso, path, out));
            }
            UdpNetwork network = new UdpNetwork(lease, mtu, port, queues, sockets, readers, path, kernel);
            LOG.info("udp network registered lease={} dev={} mtu={} bind={}:{} queues={} sockets={} offload={} gso={} gro={} coalesce={} kernel={}",
                    lease.key(), tun.name(), mtu, ext.address().getHostAddress(), port, queues.size(), sockets.size(),
                    vnetHdr, gso, gro, opts.coalesce() && vnetHdr, kernel != null);
            return network;
        } catch (IOException | InterruptedException | ConfigException | RuntimeException e) {
            UdpNetwork.closeAll(readers, sockets, queues);
            throw e;
        }
    }

    /** flannel0, with {@code queues} queues when asked and the kernel allows (else one, logged). */
    private static List<TunDevice> openQueues(UdpOptions opts) throws NetlinkException {
        EnumSet<TunDevice.Flag> flags = EnumSet.of(TunDevice.Flag.TUN, TunDevice.Flag.NO_PI);
        if (opts.offload()) {
            flags.add(TunDevice.Flag.VNET_HDR);
        }
        List<TunDevice> queues = new ArrayList<>();
        if (opts.queues() > 1) {
            EnumSet<TunDevice.Flag> mq = EnumSet.copyOf(flags);
            mq.add(TunDevice.Flag.MULTI_QUEUE);
            try {
                queues.add(TunDevice.open(DEVICE_PATTERN, mq));
                for (int i = 1; i < opts.queues(); i++) {
                    queues.add(TunDevice.open(queues.get(0).name(), mq));
                }
                return queues;
            } catch (NetlinkException e) {
                LOG.warn("tun multi-queue refused, one queue dev={} error={}", DEVICE_PATTERN, e.getMessage());
                queues.forEach(TunDevice::close);
                queues.clear();
            }
        }
        queues.add(TunDevice.open(DEVICE_PATTERN, flags));
        return queues;
    }

    /** One socket per queue sharing the port with SO_REUSEPORT; one socket when the kernel refuses that. */
    private void bindSockets(List<UdpBatchSocket> sockets, int port, int wanted) throws NetlinkException {
        UdpBatchSocket.Options opts = new UdpBatchSocket.Options(wanted > 1, SOCKET_BUFFER, SOCKET_BUFFER, TunReader.POLL_MILLIS);
        try {
            for (int i = 0; i < wanted; i++) {
                sockets.add(UdpBatchSocket.bind(ext.address(), port, opts));
            }
        } catch (NetlinkException e) {
            if (sockets.isEmpty()) {
                throw e;
            }
            LOG.warn("udp SO_REUSEPORT sockets refused, {} socket(s) error={}", sockets.size(), e.getMessage());
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

    /**
     * In {@link UdpKernelMode#GPE}, the VXLAN-GPE device's port must not be the backend's {@code port} (the external
     * interface's program refuses datagrams to it from outside, and the device's socket would take the peers' datagrams
     * from ours): refused, naming {@code JFLANNEL_UDP_GPE_PORT}, where that variable moved it there; where the backend's
     * {@code Port} is the default GPE port itself (an upstream net-conf may say 4790), {@code gpe} runs as
     * {@code encap}, with one line. Returns the options to run.
     */
    static UdpOptions checkGpePort(UdpOptions opts, int port) throws ConfigException {
        if (opts.kernel() != UdpKernelMode.GPE || opts.gpePort() != port) {
            return opts;
        }
        if (port != GpePath.DEFAULT_PORT) {
            throw new ConfigException(UdpOptions.GPE_PORT_VARIABLE, UdpOptions.GPE_PORT_VARIABLE + ": expected a UDP port other than "
                    + "the backend's Port " + port + ", got " + opts.gpePort());
        }
        LOG.warn("udp vxlan-gpe port is the backend's Port, the packet threads decapsulate (set {} to another port) port={}",
                UdpOptions.GPE_PORT_VARIABLE, port);
        return opts.withKernelMode(UdpKernelMode.ENCAP);
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
        tun.addressAndRoute(new IpPrefix(lease.subnet().inetAddress(), 32),
                new IpPrefix(conf.network().inetAddress(), conf.network().prefixLength()), mtu);
    }
}
