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
import org.jflannel.backend.wireguard.crypto.X25519;
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
import org.jflannel.linuxnet.netlink.Link;
import org.jflannel.linuxnet.netlink.RtNetlink;
import org.jflannel.linuxnet.netlink.WireguardNetlink;
import org.jflannel.linuxnet.socket.UdpBatchSocket;
import org.jflannel.linuxnet.tun.TunDevice;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The wireguard backend (REFERENCE §15, upstream {@code pkg/backend/wireguard}).
 *
 * <p>Design note. Upstream creates a kernel WireGuard device {@code flannel-wg} and configures it
 * over generic netlink. So does kernel mode here ({@link KernelDevice}), where the kernel has
 * WireGuard; many hardened or older hosts (and this project's machines) have none, and there this
 * backend runs WireGuard itself ({@code JFLANNEL_WG_DATAPLANE}: {@code auto} chooses, {@code kernel} or
 * {@code userspace} force): {@code flannel-wg} is a TUN device, and the protocol
 * ({@link Device}: Noise IKpsk2 handshake, cookies, replay window, timers) runs in Java over
 * linux-net's TUN and batched UDP socket ({@link Dataplane}). What the rest of the cluster sees is
 * upstream's either way: the device names, their addresses (the lease's network address /32, /128) and the
 * routes of the whole flannel Network (IPv6Network) through them, MTU − 80, the key file, the lease's
 * {@code {"PublicKey":…,"Port":…}} (and the same as BackendV6Data), and standard WireGuard on the wire, so upstream nodes with kernel
 * WireGuard and wireguard-go peers interoperate (tested against Debian's wireguard-go, and against
 * Debian's kernel in a VM).
 *
 * <p>What runs: IPv4 and IPv6 in every upstream Mode ({@link WgLayout}: separate with
 * {@code flannel-wg} and {@code flannel-wg-v6}, or one {@code flannel-wg} in auto, ipv4 and ipv6,
 * routing both families), in the kernel or in userspace; in userspace IPv6 inner packets batched as IPv4 ones (TSO6, merging;
 * see {@link Dataplane}). Userspace needs a JDK with X25519 and ChaCha20-Poly1305 (11+); Temurin 21+ (the image's 25) has the
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
    static final String DATAPLANE_ENV = "JFLANNEL_WG_DATAPLANE";
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

    /** Who runs the devices: {@code JFLANNEL_WG_DATAPLANE}. */
    enum Implementation {
        /** The kernel's WireGuard where it exists, else ours in userspace (the default). */
        AUTO,
        /** The kernel's WireGuard, as upstream; start-up fails without it. */
        KERNEL,
        /** Ours in userspace on a TUN, even where the kernel has WireGuard. */
        USERSPACE
    }

    @Override
    public WireguardNetwork register(NetConf conf, SubnetManager subnets)
            throws IOException, InterruptedException, ConfigException {
        BackendConfig.Wireguard cfg = config(conf);
        WgLayout layout = WgLayout.of(conf, cfg, ext);
        Implementation implementation = implementation(env);
        SecureRandom random = new SecureRandom();
        byte[] privateKey = KeyFile.loadOrCreate(KeyFile.path(env), random);
        byte[] publicKey = X25519.publicKey(privateKey);
        int mtu = (cfg.mtu() > 0 ? cfg.mtu() : ext.mtu()) - OVERHEAD;
        boolean offload = offloadWanted(env);
        int cryptoThreads = cryptoThreads(env, Runtime.getRuntime().availableProcessors());
        List<KernelDevice> kernel = implementation == Implementation.USERSPACE ? List.of() : kernelDevices(layout, privateKey, mtu,
                implementation);
        // a stopped kernel-mode run's devices this configuration does not make (another Mode, or userspace now) go
        List<String> made = kernel.stream().map(KernelDevice::name).toList();
        deleteLeftovers(List.of(DEVICE, DEVICE_V6).stream().filter(n -> !made.contains(n)).toList(),
                kernel.isEmpty() ? "dataplane=userspace" : "not made by this configuration (Backend.Mode " + cfg.mode().text()
                        + ", EnableIPv4 " + conf.enableIPv4() + ", EnableIPv6 " + conf.enableIPv6() + ")");
        List<Opened> opened = new ArrayList<>();
        try {
            if (kernel.isEmpty()) {
                for (WgLayout.Spec spec : layout.devices()) {
                    opened.add(open(spec, privateKey, random, mtu, offload, cryptoThreads));
                }
            }
            boolean v4 = conf.enableIPv4();
            boolean v6 = conf.enableIPv6();
            Lease lease = subnets.acquireLease(new LeaseAttrs(v4 ? ext.publicIp() : null, v6 ? ext.publicIpv6() : null, "wireguard",
                    v4 ? new WireguardLeaseData(publicKey, layout.portV4()).toJson() : null,
                    v6 ? new WireguardLeaseData(publicKey, layout.portV6()).toJson() : null));
            if (v4 && lease.subnet() == null || v6 && lease.ipv6Subnet() == null) {
                throw new IOException("acquired lease " + lease.key() + " lacks the " + (v4 && lease.subnet() == null ? "IPv4" : "IPv6")
                        + " subnet the network enables");
            }
            Map<String, PeerTable> tables = new LinkedHashMap<>();
            List<WireguardNetwork.Plane> planes = new ArrayList<>();
            for (KernelDevice k : kernel) {
                WgLayout.Spec spec = layout.devices().stream().filter(d -> d.name().equals(k.name())).findFirst().orElseThrow();
                for (IpPrefix[] ar : addressesAndRoutes(spec, lease, conf)) {
                    k.addressAndRoute(ar[0], ar[1]);
                }
                tables.put(k.name(), k);
                planes.add(WireguardNetwork.Plane.kernel(k));
            }
            for (Opened o : opened) {
                for (IpPrefix[] ar : addressesAndRoutes(o.spec, lease, conf)) {
                    o.tun.addressAndRoute(ar[0], ar[1], mtu);
                }
                o.plane.start(o.device);
                tables.put(o.spec.name(), PeerTable.userspace(o.device));
                planes.add(WireguardNetwork.Plane.userspace(o.spec.name(), o.device, o.plane));
            }
            WireguardPeers peers = new WireguardPeers(tables, layout, cfg, ext.publicIp(), v6 ? ext.publicIpv6() : null);
            WireguardNetwork network = new WireguardNetwork(lease, mtu, publicKey, peers, planes);
            for (WgLayout.Spec spec : layout.devices()) {
                Opened o = opened.stream().filter(x -> x.spec.name().equals(spec.name())).findFirst().orElse(null);
                Dataplane.Offloads offloads = o == null ? Dataplane.Offloads.NONE : o.plane.offloads();
                LOG.info("wireguard network registered lease={} dev={} mode={} mtu={} port={} bind={} routes={} dataplane={} publicKey={} psk={} keepalive={} offload={} gso={} gro={} cryptoThreads={}",
                        lease.key(), spec.name(), cfg.mode().text(), mtu, spec.port(), o == null ? "kernel" : o.socket,
                        (spec.routesIpv4() ? "ipv4" : "") + (spec.routesIpv4() && spec.routesIpv6() ? "," : "") + (spec.routesIpv6() ? "ipv6" : ""),
                        o == null ? "kernel" : "userspace", java.util.Base64.getEncoder().encodeToString(publicKey), cfg.psk() != null,
                        cfg.persistentKeepaliveSeconds(), offloads.vnetHdr(), offloads.gso(), offloads.gro(), o == null ? 0 : cryptoThreads);
            }
            if (kernel.isEmpty() && Runtime.version().feature() < 21) {
                // every packet is sealed and opened by the JDK's ChaCha20-Poly1305: JDK 17 has no intrinsics for it
                LOG.warn("wireguard userspace crypto on a slow runtime runtime={} hint=\"run flanneld on Temurin 25 (the image's; bin/flanneld: JAVA=/usr/lib/jvm/temurin-25-jdk-amd64/bin/java)\"",
                        Runtime.version());
            }
            return network;
        } catch (IOException | ConfigException | RuntimeException e) {
            for (Opened o : opened) {
                o.close();
            }
            for (KernelDevice k : kernel) {
                k.discard();
            }
            throw e;
        }
    }

    /**
     * Deletes what a stopped kernel-mode run left for its next start to adopt ({@link KernelDevice#close}: devices of
     * kind {@code wireguard} named {@code flannel-wg} and {@code flannel-wg-v6}, with their routes) when this start
     * runs another backend ({@code reason}, e.g. {@code Backend.Type=vxlan}), so that no stale WireGuard device or route
     * competes with it. Called in the namespace the devices belong in; a failure is logged, never fatal.
     */
    public static void deleteLeftoverDevices(String reason) {
        deleteLeftovers(List.of(DEVICE, DEVICE_V6), reason);
    }

    private static void deleteLeftovers(List<String> names, String reason) {
        if (names.isEmpty()) {
            return;
        }
        try (RtNetlink nl = RtNetlink.open()) {
            for (String name : names) {
                java.util.Optional<Link> old = nl.link(name);
                if (old.isPresent() && old.get().kind().equals("wireguard")) {
                    nl.deleteLink(name);
                    LOG.info("wireguard kernel device leftover deleted dev={} index={} reason=\"{}\"", name, old.get().index(), reason);
                }
            }
        } catch (NetlinkException e) {
            LOG.warn("wireguard kernel device leftovers not checked devices={} error={}", names, e.getMessage());
        }
    }

    /**
     * Kernel mode's devices, one per entry of the layout; an empty list when {@code AUTO} finds no WireGuard in
     * the kernel (then userspace runs, said in one log line). {@code KERNEL} without it fails with what the
     * kernel answered and the variable that asked.
     */
    private static List<KernelDevice> kernelDevices(WgLayout layout, byte[] privateKey, int mtu, Implementation implementation)
            throws IOException {
        List<KernelDevice> made = new ArrayList<>();
        try {
            for (WgLayout.Spec spec : layout.devices()) {
                made.add(KernelDevice.create(spec, privateKey, mtu));
            }
            return made;
        } catch (NetlinkException e) {
            for (KernelDevice k : made) {
                k.discard();
            }
            if (implementation == Implementation.AUTO && KernelDevice.absent(e)) {
                LOG.info("wireguard kernel module not available, running WireGuard in userspace dev={} reason=\"{}\"",
                        layout.devices().get(0).name(), e.getMessage());
                return List.of();
            }
            throw new IOException("wireguard kernel device " + layout.devices().get(0).name() + ": " + e.getMessage()
                    + (KernelDevice.absent(e) ? " (" + DATAPLANE_ENV + "=kernel asks for the kernel's WireGuard, which this kernel lacks;"
                    + " unset it to run WireGuard in userspace)" : ""), e);
        }
    }

    /**
     * Whether this node's WireGuard would run in userspace (ours, every packet sealed in the daemon) rather than in
     * the kernel, asked before anything is made (the daemon picks its JIT by it): {@code JFLANNEL_WG_DATAPLANE}, and
     * for {@code auto} whether the kernel has the {@code wireguard} generic netlink family (looked up only, which
     * loads the module where there is one; no device is made). A lookup that fails otherwise says userspace; a bad
     * variable is an {@link IllegalArgumentException}, as at registration.
     */
    public static boolean runsInUserspace(Map<String, String> env) {
        Implementation i = implementation(env);
        if (i != Implementation.AUTO) {
            return i == Implementation.USERSPACE;
        }
        try (WireguardNetlink genl = WireguardNetlink.open()) {
            return false;
        } catch (NetlinkException e) {
            return true;
        }
    }

    /** {@code JFLANNEL_WG_DATAPLANE}: {@code auto} (default), {@code kernel} or {@code userspace}. */
    static Implementation implementation(Map<String, String> env) {
        String v = env.getOrDefault(DATAPLANE_ENV, "");
        return switch (v) {
            case "", "auto" -> Implementation.AUTO;
            case "kernel" -> Implementation.KERNEL;
            case "userspace" -> Implementation.USERSPACE;
            default -> throw new IllegalArgumentException(DATAPLANE_ENV + ": expected auto, kernel or userspace, got \"" + v + "\"");
        };
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
     * batches; default two less than the node's {@code cpus}, at most 3 (0: each direction on its own
     * thread only). A worker pays only on a CPU the packet threads and the node's own traffic leave idle:
     * handing a batch over costs wake-ups and moves its bytes to another core's cache, and on 2 CPUs
     * 0 workers carried 5 % more than 1 with 5–7 % less CPU per Gbit/s, single stream and 4 (docs/benchmarks.md,
     * "wireguard, session 17").
     */
    static int cryptoThreads(Map<String, String> env, int cpus) {
        String v = env.get(CRYPTO_THREADS_ENV);
        if (v == null || v.isEmpty()) {
            return Math.max(0, Math.min(3, cpus - 2));
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
     * Upstream's {@code Configure}/{@code ConfigureV6}, per family the device routes: the lease subnet's own
     * address ({@code /32}, {@code /128}) and the route of the whole flannel Network ({@code IPv6Network})
     * through the device, as pairs {own address, network}.
     */
    private static List<IpPrefix[]> addressesAndRoutes(WgLayout.Spec spec, Lease lease, NetConf conf) {
        List<IpPrefix[]> out = new ArrayList<>(2);
        if (spec.routesIpv4()) {
            out.add(new IpPrefix[] {new IpPrefix(lease.subnet().inetAddress(), 32),
                new IpPrefix(conf.network().inetAddress(), conf.network().prefixLength())});
        }
        if (spec.routesIpv6()) {
            out.add(new IpPrefix[] {new IpPrefix(lease.ipv6Subnet().inetAddress(), 128),
                new IpPrefix(conf.ipv6Network().inetAddress(), conf.ipv6Network().prefixLength())});
        }
        return out;
    }
}
