package org.jflannel.backend.wireguard;

import java.io.IOException;
import java.security.SecureRandom;
import java.time.Instant;
import java.util.EnumSet;
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
 * upstream's: the device name, its address (the lease's network address /32) and the route of the
 * whole flannel Network through it, MTU − 80, the key file, the lease's {@code
 * {"PublicKey":…,"Port":…}}, and standard WireGuard on the wire, so upstream nodes with kernel
 * WireGuard and wireguard-go peers interoperate (tested against Debian's wireguard-go).
 *
 * <p>What runs today: IPv4 (modes separate, auto, ipv4 on an IPv4 network); userspace only. Not
 * yet: IPv6 and {@code flannel-wg-v6}, kernel mode (only linux-net's request encoding, {@code
 * WireguardGenl}, exists; nothing selects it), TUN offloads with UDP
 * GSO/GRO, crypto on more than two cores. Needs a JDK with X25519 and ChaCha20-Poly1305 (11+);
 * Temurin 21+ (the image's 25) has the ChaCha20/Poly1305 intrinsics that make it fast.
 *
 * <p>{@link #register} must run in the network namespace the device belongs in.
 */
public final class WireguardBackend implements Backend {
    private static final Logger LOG = LoggerFactory.getLogger(WireguardBackend.class);
    static final String DEVICE = "flannel-wg";
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
        checkSupported(conf, cfg);
        SecureRandom random = new SecureRandom();
        byte[] privateKey = KeyFile.loadOrCreate(KeyFile.path(env), random);
        int mtu = (cfg.mtu() > 0 ? cfg.mtu() : ext.mtu()) - OVERHEAD;
        boolean offload = offloadWanted(env);
        EnumSet<TunDevice.Flag> flags = EnumSet.of(TunDevice.Flag.TUN, TunDevice.Flag.NO_PI);
        if (offload) {
            flags.add(TunDevice.Flag.VNET_HDR);
        }
        TunDevice tun = TunDevice.open(DEVICE, flags);
        UdpBatchSocket socket = null;
        Dataplane plane = null;
        try {
            socket = UdpBatchSocket.bind(ext.address(), cfg.listenPort(),
                    new UdpBatchSocket.Options(false, SOCKET_BUFFER, SOCKET_BUFFER, Dataplane.TICK_MILLIS));
            Dataplane.Offloads offloads = offload ? offloads(tun, socket) : Dataplane.Offloads.NONE;
            HandshakeLoad load = HandshakeLoad.standard(System::nanoTime);
            int cryptoThreads = cryptoThreads(env);
            plane = new Dataplane(tun, socket, load, offloads, cryptoThreads);
            Device device = new Device(Device.Config.withLoadDetector(privateKey, timings, System::nanoTime, Instant::now,
                    random, mtu, load), plane);
            String data = new WireguardLeaseData(device.publicKey(), cfg.listenPort()).toJson();
            Lease lease = subnets.acquireLease(new LeaseAttrs(ext.publicIp(), null, "wireguard", data, null));
            if (lease.subnet() == null) {
                throw new IOException("acquired lease " + lease.key() + " has no IPv4 subnet");
            }
            configure(tun, lease, conf, mtu);
            plane.start(device);
            WireguardNetwork network = new WireguardNetwork(lease, mtu, cfg, device, plane);
            LOG.info("wireguard network registered lease={} dev={} mtu={} bind={}:{} mode=userspace publicKey={} psk={} keepalive={} offload={} gso={} gro={} cryptoThreads={}",
                    lease.key(), DEVICE, mtu, ext.address().getHostAddress(), cfg.listenPort(),
                    java.util.Base64.getEncoder().encodeToString(device.publicKey()), cfg.psk() != null, cfg.persistentKeepaliveSeconds(),
                    offloads.vnetHdr(), offloads.gso(), offloads.gro(), cryptoThreads);
            if (Runtime.version().feature() < 21) {
                // every packet is sealed and opened by the JDK's ChaCha20-Poly1305: JDK 17 has no intrinsics for it
                LOG.warn("wireguard userspace crypto on a slow runtime runtime={} hint=\"run flanneld on Temurin 25 (the image's; bin/flanneld: JAVA=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java FLANNELD_JIT=c2)\"",
                        Runtime.version());
            }
            return network;
        } catch (IOException | ConfigException | RuntimeException e) {
            if (plane != null) {
                plane.close();
            } else {
                if (socket != null) {
                    socket.close();
                }
                tun.close();
            }
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

    /** TSO4 and checksum offload on the TUN, UDP GSO and GRO on the socket: each as far as the kernel allows. */
    private static Dataplane.Offloads offloads(TunDevice tun, UdpBatchSocket socket) {
        try {
            tun.setOffload(TunDevice.TUN_F_CSUM | TunDevice.TUN_F_TSO4);
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

    private void checkSupported(NetConf conf, BackendConfig.Wireguard cfg) throws ConfigException {
        if (conf.enableIPv6() || cfg.mode() == BackendConfig.WireguardMode.IPV6) {
            throw new ConfigException("EnableIPv6", "the userspace wireguard backend supports IPv4 only so far; set EnableIPv6 to false and Mode to separate, auto or ipv4");
        }
        if (!conf.enableIPv4() || conf.network() == null) {
            throw new ConfigException("Network", "the wireguard backend needs an IPv4 Network");
        }
        if (ext.address() == null) {
            throw new ConfigException("EnableIPv4", "interface " + ext.name() + " has no IPv4 address");
        }
    }

    /** Address {@code <subnet IP>/32}, MTU, up, then the route {@code Network dev flannel-wg} (upstream's). */
    private static void configure(TunDevice tun, Lease lease, NetConf conf, int mtu) throws NetlinkException {
        tun.addressAndRoute(new IpPrefix(lease.subnet().inetAddress(), 32),
                new IpPrefix(conf.network().inetAddress(), conf.network().prefixLength()), mtu);
    }
}
