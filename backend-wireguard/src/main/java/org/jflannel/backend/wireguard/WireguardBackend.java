package org.jflannel.backend.wireguard;

import java.io.IOException;
import java.security.SecureRandom;
import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.jflannel.backend.wireguard.protocol.Device;
import org.jflannel.backend.wireguard.protocol.HandshakeLoad;
import org.jflannel.backend.wireguard.protocol.Timings;
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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The wireguard backend (REFERENCE §15, upstream {@code pkg/backend/wireguard}).
 *
 * <p>Design note. Upstream creates a kernel WireGuard device {@code flannel-wg} and configures it
 * over generic netlink; this kernel, like many hardened or older hosts, has no WireGuard, so this
 * backend runs WireGuard itself: {@code flannel-wg} is a TUN device, and the protocol
 * ({@link Device}: Noise IKpsk2 handshake, cookies, replay window, timers) runs in Java over
 * linux-net's TUN and batched UDP socket ({@link Dataplane}). What the rest of the cluster sees is
 * upstream's: the device names, their addresses (the lease's network address /32, /128) and the
 * routes of the whole flannel Network (IPv6Network) through them, MTU − 80, the key file, the lease's
 * {@code {"PublicKey":…,"Port":…}} (and the same as BackendV6Data), and standard WireGuard on the wire, so upstream nodes with kernel
 * WireGuard and wireguard-go peers interoperate (tested against Debian's wireguard-go).
 *
 * <p>What runs today: IPv4 and IPv6 in every upstream Mode ({@link WgLayout}: separate with
 * {@code flannel-wg} and {@code flannel-wg-v6}, or one {@code flannel-wg} in auto, ipv4 and ipv6,
 * routing both families), userspace only; IPv6 inner packets batched as IPv4 ones (TSO6, merging; see {@link Dataplane}). Not
 * yet: kernel mode (only linux-net's request encoding, {@code WireguardGenl}, exists; nothing selects
 * it). Needs a JDK with X25519 and ChaCha20-Poly1305 (11+); Temurin 21+ (the image's 25) has the
 * ChaCha20/Poly1305 intrinsics that make it fast.
 *
 * <p>{@link #register} must run in the network namespace the device belongs in.
 */
public final class WireguardBackend implements Backend {
    private static final Logger LOG = LoggerFactory.getLogger(WireguardBackend.class);
    static final String DEVICE = "flannel-wg";
    /** separate mode's second device: IPv6 endpoints, ListenPortV6, the IPv6Network. */
    static final String DEVICE_V6 = "flannel-wg-v6";
    /** upstream's overhead: 80 bytes (outer IPv6 40 + UDP 8 + WireGuard 32). */
    static final int OVERHEAD = 80;
    static final int SOCKET_BUFFER = 8 << 20;

    private final ExternalInterface ext;
    static final String OFFLOAD_ENV = "JFLANNEL_WG_OFFLOAD";
    static final String CRYPTO_THREADS_ENV = "JFLANNEL_WG_CRYPTO_THREADS";
    private final Map<String, String> env;
    private final Timings timings;

    public WireguardBackend(ExternalInterface ext) {
        this(ext, System.getenv(), Timings.standard());
    }

    /** @param timings the protocol's constants; tests shorten REKEY_AFTER_TIME to force rekeys */
    public WireguardBackend(ExternalInterface ext, Map<String, String> env, Timings timings) {
        this.ext = Objects.requireNonNull(ext, "ext");
        this.env = Map.copyOf(env);
        this.timings = Objects.requireNonNull(timings, "timings");
    }

    @Override
    public WireguardNetwork register(NetConf conf, SubnetManager subnets)
            throws IOException, InterruptedException, ConfigException {
        BackendConfig.Wireguard cfg = config(conf);
        WgLayout layout = WgLayout.of(conf, cfg, ext);
        SecureRandom random = new SecureRandom();
        byte[] privateKey = KeyFile.loadOrCreate(KeyFile.path(env), random);
        int mtu = (cfg.mtu() > 0 ? cfg.mtu() : ext.mtu()) - OVERHEAD;
        boolean offload = offloadWanted(env);
        int cryptoThreads = cryptoThreads(env);
        List<Opened> opened = new ArrayList<>();
        try {
            for (WgLayout.Spec spec : layout.devices()) {
                opened.add(open(spec, privateKey, random, mtu, offload, cryptoThreads));
            }
            byte[] publicKey = opened.get(0).device.publicKey();
            boolean v4 = conf.enableIPv4();
            boolean v6 = conf.enableIPv6();
            Lease lease = subnets.acquireLease(new LeaseAttrs(v4 ? ext.publicIp() : null, v6 ? ext.publicIpv6() : null, "wireguard",
                    v4 ? new WireguardLeaseData(publicKey, layout.portV4()).toJson() : null,
                    v6 ? new WireguardLeaseData(publicKey, layout.portV6()).toJson() : null));
            if (v4 && lease.subnet() == null || v6 && lease.ipv6Subnet() == null) {
                throw new IOException("acquired lease " + lease.key() + " lacks the " + (v4 && lease.subnet() == null ? "IPv4" : "IPv6")
                        + " subnet the network enables");
            }
            Map<String, Device> devices = new LinkedHashMap<>();
            List<WireguardNetwork.Plane> planes = new ArrayList<>();
            for (Opened o : opened) {
                configure(o.tun, o.spec, lease, conf, mtu);
                o.plane.start(o.device);
                devices.put(o.spec.name(), o.device);
                planes.add(new WireguardNetwork.Plane(o.spec.name(), o.device, o.plane));
            }
            WireguardPeers peers = new WireguardPeers(devices, layout, cfg, ext.publicIp(), v6 ? ext.publicIpv6() : null);
            WireguardNetwork network = new WireguardNetwork(lease, mtu, peers, planes);
            for (Opened o : opened) {
                Dataplane.Offloads offloads = o.plane.offloads();
                LOG.info("wireguard network registered lease={} dev={} mode={} mtu={} bind={} routes={} dataplane=userspace publicKey={} psk={} keepalive={} offload={} gso={} gro={} cryptoThreads={}",
                        lease.key(), o.spec.name(), cfg.mode().text(), mtu, o.socket, (o.spec.routesIpv4() ? "ipv4" : "")
                        + (o.spec.routesIpv4() && o.spec.routesIpv6() ? "," : "") + (o.spec.routesIpv6() ? "ipv6" : ""),
                        java.util.Base64.getEncoder().encodeToString(publicKey), cfg.psk() != null, cfg.persistentKeepaliveSeconds(),
                        offloads.vnetHdr(), offloads.gso(), offloads.gro(), cryptoThreads);
            }
            if (Runtime.version().feature() < 21) {
                // every packet is sealed and opened by the JDK's ChaCha20-Poly1305: JDK 17 has no intrinsics for it
                LOG.warn("wireguard userspace crypto on a slow runtime runtime={} hint=\"run flanneld on Temurin 25 (the image's; bin/flanneld: JAVA=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java FLANNELD_JIT=c2)\"",
                        Runtime.version());
            }
            return network;
        } catch (IOException | ConfigException | RuntimeException e) {
            for (Opened o : opened) {
                o.close();
            }
            throw e;
        }
    }

    /** One device's parts before it runs: its TUN, socket, packet threads (not started) and protocol. */
    private record Opened(WgLayout.Spec spec, TunDevice tun, UdpBatchSocket socket, Dataplane plane, Device device) {
        void close() {
            plane.close(); // the socket and the TUN with it
        }
    }

    /** The TUN named after {@code spec}, its socket bound, the packet threads and the protocol device over them. */
    private Opened open(WgLayout.Spec spec, byte[] privateKey, SecureRandom random, int mtu, boolean offload, int cryptoThreads)
            throws NetlinkException {
        EnumSet<TunDevice.Flag> flags = EnumSet.of(TunDevice.Flag.TUN, TunDevice.Flag.NO_PI);
        if (offload) {
            flags.add(TunDevice.Flag.VNET_HDR);
        }
        TunDevice tun = TunDevice.open(spec.name(), flags);
        UdpBatchSocket socket = null;
        try {
            socket = UdpBatchSocket.bind(spec.bind(), spec.port(),
                    new UdpBatchSocket.Options(false, SOCKET_BUFFER, SOCKET_BUFFER, Dataplane.TICK_MILLIS));
            Dataplane.Offloads offloads = offload ? offloads(tun, socket) : Dataplane.Offloads.NONE;
            HandshakeLoad load = HandshakeLoad.standard(System::nanoTime);
            Dataplane plane = new Dataplane(tun, socket, load, offloads, cryptoThreads,
                    spec.name().equals(DEVICE_V6) ? "wg6" : "wg");
            Device device = new Device(Device.Config.withLoadDetector(privateKey, timings, System::nanoTime, Instant::now,
                    random, mtu, load), plane);
            return new Opened(spec, tun, socket, plane, device);
        } catch (NetlinkException | RuntimeException e) {
            if (socket != null) {
                socket.close();
            }
            tun.close();
            throw e;
        }
    }

    /** {@code JFLANNEL_WG_OFFLOAD=0} turns the batching off (one packet per system call), for comparison; default on. */
    static boolean offloadWanted(Map<String, String> env) {
        String v = env.getOrDefault(OFFLOAD_ENV, "1");
        return switch (v) {
            case "1", "true" -> true;
            case "0", "false" -> false;
            default -> throw new IllegalArgumentException(OFFLOAD_ENV + ": expected 0 or 1, got \"" + v + "\"");
        };
    }

    /**
     * {@code JFLANNEL_WG_CRYPTO_THREADS}: threads besides each packet thread that seal (or open) its
     * batches; default one less than the CPUs, at most 3 (0: each direction on its own thread only).
     */
    static int cryptoThreads(Map<String, String> env) {
        String v = env.get(CRYPTO_THREADS_ENV);
        if (v == null || v.isEmpty()) {
            return Math.max(0, Math.min(3, Runtime.getRuntime().availableProcessors() - 1));
        }
        try {
            int n = Integer.parseInt(v);
            if (n >= 0 && n <= 64) {
                return n;
            }
        } catch (NumberFormatException e) {
            // below
        }
        throw new IllegalArgumentException(CRYPTO_THREADS_ENV + ": expected 0..64, got \"" + v + "\"");
    }

    /** TSO4, TSO6 and checksum offload on the TUN, UDP GSO and GRO on the socket: each as far as the kernel allows. */
    private static Dataplane.Offloads offloads(TunDevice tun, UdpBatchSocket socket) {
        try {
            tun.setOffload(TunDevice.TUN_F_CSUM | TunDevice.TUN_F_TSO4 | TunDevice.TUN_F_TSO6);
        } catch (NetlinkException e) {
            // the virtio_net_hdr stays (all zero): whole packets, one per read
            LOG.warn("wireguard tun offloads refused, one packet per read dev={} error={}", tun.name(), e.getMessage());
        }
        boolean gso = socket.gsoSupported();
        boolean gro = socket.enableGro();
        if (!gso || !gro) {
            LOG.warn("wireguard udp offloads refused by the kernel socket={} gso={} gro={}", socket, gso, gro);
        }
        return new Dataplane.Offloads(true, gso, gro, true);
    }

    static BackendConfig.Wireguard config(NetConf conf) throws ConfigException {
        if (!(conf.backend() instanceof BackendConfig.Wireguard cfg)) {
            throw new ConfigException("Backend.Type", "wireguard backend cannot run Backend.Type " + conf.backend().type());
        }
        return cfg;
    }

    /**
     * Upstream's {@code Configure}/{@code ConfigureV6}: MTU and up, then per family the device routes, the
     * lease subnet's own address ({@code /32}, {@code /128}) and the route of the whole flannel Network
     * ({@code IPv6Network}) through the device.
     */
    private static void configure(TunDevice tun, WgLayout.Spec spec, Lease lease, NetConf conf, int mtu) throws NetlinkException {
        if (spec.routesIpv4()) {
            tun.addressAndRoute(new IpPrefix(lease.subnet().inetAddress(), 32),
                    new IpPrefix(conf.network().inetAddress(), conf.network().prefixLength()), mtu);
        }
        if (spec.routesIpv6()) {
            tun.addressAndRoute(new IpPrefix(lease.ipv6Subnet().inetAddress(), 128),
                    new IpPrefix(conf.ipv6Network().inetAddress(), conf.ipv6Network().prefixLength()), mtu);
        }
    }
}
