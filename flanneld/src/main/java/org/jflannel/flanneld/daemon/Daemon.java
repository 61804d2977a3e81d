package org.jflannel.flanneld.daemon;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;
import org.jflannel.core.Backend;
import org.jflannel.core.BackendConfig;
import org.jflannel.core.ConfigException;
import org.jflannel.core.ExternalInterface;
import org.jflannel.core.Lease;
import org.jflannel.core.NetConf;
import org.jflannel.core.Network;
import org.jflannel.core.SubnetEnv;
import org.jflannel.core.SubnetManager;
import org.jflannel.flanneld.config.Options;
import org.jflannel.cni.CniServer;
import org.jflannel.flanneld.health.HealthServer;
import org.jflannel.flanneld.health.Metrics;
import org.jflannel.flanneld.iface.InterfaceSelector;
import org.jflannel.flanneld.iface.IpLiteral;
import org.jflannel.flanneld.iface.RtNetlinkSnapshot;
import org.jflannel.flanneld.iface.SelectionException;
import org.jflannel.flanneld.probe.PeersJson;
import org.jflannel.flanneld.probe.ProbeSettings;
import org.jflannel.flanneld.probe.Prober;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.netlink.IpPrefix;
import org.jflannel.linuxnet.netlink.RtNetlink;
import org.jflannel.linuxnet.sys.SdNotify;
import org.jflannel.backend.wireguard.WireguardBackend;
import org.jflannel.subnet.kube.KubeSubnetManager;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The daemon's start-up and life (REFERENCE §9.5, DESIGN §3): subnet manager, signals, health
 * server, network config, br_netfilter check, external interface, backend, rules, blackhole
 * routes, subnet.env, the lease-events loop, sd_notify READY=1, complete the lease, wait.
 * {@link #run()} returns the exit code; everything it started is closed before it returns (kernel
 * state stays, §9.4).
 */
public final class Daemon {
    private static final Logger LOG = LoggerFactory.getLogger(Daemon.class);

    private final Options o;
    /** CNI requests served at once; more are told to run the plugin's own JVM. */
    private static final int CNI_IN_FLIGHT = 128;
    private final Map<String, String> env;
    private final Shutdown shutdown = new Shutdown();
    private final Metrics metrics = new Metrics();
    private final AtomicBoolean ready = new AtomicBoolean();
    private final Deque<AutoCloseable> started = new ArrayDeque<>();
    private HealthServer healthServer;
    private final Path procRoot;
    private volatile Prober prober;
    private volatile String backendType = "";

    /** The command line as given, which a relaunch for the backend's JIT passes on ({@link Jit}). */
    private final List<String> args;

    public Daemon(Options options, Map<String, String> env) {
        this(options, env, Path.of("/proc"), List.of());
    }

    /** @param args the command line, which a relaunch for the backend's JIT passes on ({@link Jit}) */
    public Daemon(Options options, Map<String, String> env, List<String> args) {
        this(options, env, Path.of("/proc"), args);
    }

    Daemon(Options options, Map<String, String> env, Path procRoot) {
        this(options, env, procRoot, List.of());
    }

    private Daemon(Options options, Map<String, String> env, Path procRoot, List<String> args) {
        this.o = options;
        this.env = Map.copyOf(env);
        this.procRoot = procRoot;
        this.args = List.copyOf(args);
    }

    public int run() {
        int code;
        try {
            code = start();
        } catch (StartupError e) {
            LOG.error(e.getMessage());
            code = 1;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            code = 1;
        }
        closeAll();
        if (code == 0) {
            LOG.info("Exiting cleanly...");
        }
        return code;
    }

    private int start() throws StartupError, InterruptedException {
        // before the subnet manager's client and the listing allocate: grown as the JDK would until the snapshot
        Optional<StartupHeap> startupHeap = StartupHeap.ofThisJvm();
        startupHeap.ifPresent(StartupHeap::generous);
        Path subnetFile = Path.of(o.subnetFile());
        SubnetEnv.Previous previous = SubnetEnv.readPrevious(subnetFile);
        SubnetManager subnets = SubnetManagers.create(o, env, previous, () -> {
            LOG.info("Lease has been revoked. Shutting down daemon.");
            shutdown.request("lease revoked");
        });
        started.push(subnets);
        shutdown.installSignalHandlers();
        startHealthServer();
        // ours (issue 23): the external interface as an IPv4-only network would have it, looked up while the
        // config is fetched (etcd's first call is most of a cold start's first second); used if the config agrees
        CompletableFuture<EarlyInterface> earlyExt = subnets instanceof KubeSubnetManager ? null
                : CompletableFuture.supplyAsync(() -> EarlyInterface.lookUp(() -> selectInterface(true, false, subnets)),
                        task -> {
                            Thread t = new Thread(task, "external-interface");
                            t.setDaemon(true);
                            t.start();
                        });
        NetConf conf = networkConfig(subnets);
        if (conf == null) {
            return 0; // stopped while waiting for the config
        }
        if (conf.backendDefaulted()) {
            LOG.warn("net-conf.json has no Backend: using udp as upstream does; set \"Backend\": {\"Type\": \"vxlan\"} explicitly");
        }
        // ours (issue 40): the JIT the backend needs, before the kernel is touched (may exec the launcher again)
        Jit.followBackend(conf.backend(), env, args, this::userspaceWireguard);
        checkBrNetfilter(conf);
        ExternalInterface ext = externalInterface(conf, subnets, earlyExt);
        LeaseLoop loop = new LeaseLoop(metrics, startupHeap);
        backendType = conf.backend().type();
        if (!backendType.equals("wireguard")) {
            // a stopped kernel-mode WireGuard run leaves its device for the next to adopt (ours): not for another backend
            WireguardBackend.deleteLeftoverDevices("Backend.Type=" + backendType);
        }
        Backend backend = Backends.create(backendType, ext, subnets, loop.executor(),
                Duration.ofSeconds(o.vxlanReconcileInterval()), env);
        Network network;
        try {
            network = backend.register(conf, subnets);
        } catch (IOException | ConfigException | RuntimeException e) {
            loop.close();
            throw new StartupError("Error registering network: " + e.getMessage(), e);
        }
        started.push(() -> loop.close(network));
        Backends.bridgeMetrics(network, metrics);
        startProber(conf, network, loop);
        Lease lease = network.lease();
        new RulesSetup(o, metrics, started).apply(conf, lease, previous);
        startBlackholeRoutes(conf, lease);
        writeSubnetEnv(subnetFile, conf, network);
        startCniServer(subnetFile);
        try {
            loop.start(subnets, network);
        } catch (IOException e) {
            throw new StartupError("Failed to watch leases: " + e.getMessage(), e);
        }
        if (o.networkPolicy()) {
            NetworkPolicies policies = NetworkPolicies.start(o, env, subnets);
            started.push(policies);
            metrics.setNetworkPolicy(policies::sample, policies::droppedPackets);
            if (healthServer != null) {
                healthServer.addJson("/policy", policies::json);
            }
        }
        notifySystemd();
        completeLease(subnets, lease);
        LOG.info("Running backend. lease={} mtu={}", lease.key(), network.mtu());
        shutdown.await();
        return 0;
    }

    private boolean userspaceWireguard() {
        try {
            return WireguardBackend.runsInUserspace(env);
        } catch (IllegalArgumentException e) {
            return true; // a bad JFLANNEL_WG_DATAPLANE: registration says so and stops
        }
    }

    private void startHealthServer() throws StartupError {
        if (o.healthzPort() <= 0) {
            return;
        }
        InetAddress ip = IpLiteral.parse(o.healthzIp()).orElseThrow(() ->
                new StartupError("Start healthz server error. invalid --healthz-ip: " + o.healthzIp()));
        try {
            healthServer = HealthServer.start(ip, o.healthzPort(), ready::get, metrics,
                    () -> PeersJson.render(prober, backendType));
            started.push(healthServer);
        } catch (IOException | RuntimeException e) {
            throw new StartupError("Start healthz server error. " + e.getMessage(), e);
        }
    }

    /**
     * Ours (issue 12): the peer prober, fed by the lease-events loop; off with {@code --peer-probe=false}
     * and for backends it does not know how to probe. host-gw (issue 23) probes each peer's cni0 address.
     * A failure to start it (no CAP_NET_RAW) is a warning: probing never keeps the node down.
     */
    private void startProber(NetConf conf, Network network, LeaseLoop loop) {
        if (!o.peerProbe()) {
            LOG.info("peer probing off: --peer-probe=false");
            return;
        }
        String device = null;
        boolean hostGw = false;
        if (conf.backend() instanceof BackendConfig.Vxlan v) {
            device = "flannel." + v.vni();
        } else if (conf.backend() instanceof BackendConfig.Udp) {
            device = null;
        } else if (conf.backend() instanceof BackendConfig.HostGw) {
            hostGw = true; // ours (issue 23): probes go along the host-gw routes to each peer's cni0
        } else if (conf.backend() instanceof BackendConfig.Ipip) {
            device = null; // the peer's flannel.ipip carries its subnet address as /32, as flannel0 does; no entries to check
        } else {
            LOG.info("peer probing off: backend {} is not probed", conf.backend().type());
            return;
        }
        if (!conf.enableIPv4()) {
            LOG.info("peer probing off: IPv4 is not enabled (probes are ICMPv4)");
            return;
        }
        try {
            Prober p = Prober.start(new ProbeSettings(Duration.ofSeconds(o.peerProbeInterval()), Duration.ofSeconds(1),
                    network.mtu(), device, hostGw), metrics);
            started.push(p);
            loop.onPeers(p::apply);
            prober = p;
        } catch (NetlinkException | RuntimeException e) {
            LOG.warn("peer probing not started error={}", e.getMessage());
        }
    }

    /**
     * §9.5 step 4: retried every 1 s; a config the daemon can never run with is fatal. Null when stopped meanwhile.
     * Attempts start 1 s apart: one that itself took longer (the etcd manager waits up to its call timeout for an
     * unreachable etcd) is retried at once, so that etcd's return is not missed by a pause.
     */
    private NetConf networkConfig(SubnetManager subnets) throws StartupError, InterruptedException {
        while (true) {
            long attemptStart = System.nanoTime();
            try {
                return subnets.networkConfig();
            } catch (ConfigException e) {
                if (e.field().equals("Backend.Type") || e.field().equals("Backend")) {
                    throw new StartupError("Error fetching backend: " + e.getMessage(), e);
                }
                if (e.getMessage().endsWith("none defined stack")) {
                    throw new StartupError(e.getMessage(), e);
                }
                LOG.error("Couldn't fetch network config: {}", e.getMessage());
            } catch (IOException e) {
                LOG.error("Couldn't fetch network config: {}", e.getMessage());
            }
            Duration pause = Duration.ofSeconds(1).minusNanos(System.nanoTime() - attemptStart);
            if (shutdown.await(pause.isNegative() ? Duration.ZERO : pause)) {
                return null;
            }
        }
    }

    /** §1: without nftables, the bridge netfilter sysctls must exist (br_netfilter loaded). */
    private void checkBrNetfilter(NetConf conf) throws StartupError {
        if (conf.enableNFTables()) {
            return;
        }
        if (conf.enableIPv4()) {
            requireFile(procRoot.resolve("sys/net/bridge/bridge-nf-call-iptables"));
        }
        if (conf.enableIPv6()) {
            requireFile(procRoot.resolve("sys/net/bridge/bridge-nf-call-ip6tables"));
        }
    }

    private static void requireFile(Path p) throws StartupError {
        if (!Files.exists(p)) {
            throw new StartupError("Failed to check br_netfilter: stat " + p + ": no such file or directory");
        }
    }

    /** An external interface looked up ahead, and when; null when that lookup failed (then it is made again). */
    private record EarlyInterface(ExternalInterface ext, long nanos) {
        interface Lookup {
            ExternalInterface run() throws StartupError;
        }

        static EarlyInterface lookUp(Lookup lookup) {
            try {
                return new EarlyInterface(lookup.run(), System.nanoTime());
            } catch (StartupError | RuntimeException e) {
                LOG.debug("early external interface lookup failed, will look up again error={}", e.getMessage());
                return null;
            }
        }
    }

    /** A lookup made ahead is used when the config is IPv4-only and it succeeded < 2 s ago; else one is made now. */
    private ExternalInterface externalInterface(NetConf conf, SubnetManager subnets,
                                                CompletableFuture<EarlyInterface> early) throws StartupError, InterruptedException {
        ExternalInterface ext = null;
        if (early != null && conf.enableIPv4() && !conf.enableIPv6()) {
            try {
                EarlyInterface e = early.get();
                if (e != null && System.nanoTime() - e.nanos() < Duration.ofSeconds(2).toNanos()) {
                    ext = e.ext();
                }
            } catch (ExecutionException e) {
                LOG.debug("early external interface lookup failed error={}", e.getCause().toString());
            }
        }
        if (ext == null) {
            ext = selectInterface(conf.enableIPv4(), conf.enableIPv6(), subnets);
        }
        LOG.info("external interface chosen name={} index={} mtu={} address={} publicIp={}", ext.name(), ext.index(),
                ext.mtu(), ext.address() == null ? ext.address6() : ext.address(),
                ext.publicIp() == null ? ext.publicIpv6() : ext.publicIp());
        return ext;
    }

    /** §1: the node-public-ip annotations (kube) override the flags, also for the lookup. */
    private ExternalInterface selectInterface(boolean enableIPv4, boolean enableIPv6, SubnetManager subnets)
            throws StartupError {
        String publicIp = o.publicIp();
        String publicIpv6 = o.publicIpv6();
        if (subnets instanceof KubeSubnetManager kube) {
            publicIp = kube.nodePublicIp().orElse(publicIp);
            publicIpv6 = kube.nodePublicIpv6().orElse(publicIpv6);
        }
        InterfaceSelector.Request request = new InterfaceSelector.Request(o.iface(), o.ifaceRegex(), o.ifaceCanReach(),
                publicIp, publicIpv6, enableIPv4, enableIPv6);
        try (RtNetlink nl = RtNetlink.open()) {
            return new InterfaceSelector(RtNetlinkSnapshot.read(nl), ip -> RtNetlinkSnapshot.routeGet(nl, ip))
                    .select(request);
        } catch (SelectionException e) {
            throw new StartupError(e.getMessage(), e);
        } catch (NetlinkException | RuntimeException e) {
            throw new StartupError("Failed to find any valid interface to use: " + e.getMessage(), e);
        }
    }

    private void startBlackholeRoutes(NetConf conf, Lease lease) {
        if (!o.ipBlackholeRoute()) {
            return;
        }
        List<IpPrefix> subnets = new java.util.ArrayList<>();
        if (conf.enableIPv4() && lease.subnet() != null) {
            subnets.add(new IpPrefix(lease.subnet().inetAddress(), lease.subnet().prefixLength()));
        }
        if (conf.enableIPv6() && lease.ipv6Subnet() != null) {
            subnets.add(new IpPrefix(lease.ipv6Subnet().inetAddress(), lease.ipv6Subnet().prefixLength()));
        }
        BlackholeRoutes routes = new BlackholeRoutes(subnets, metrics);
        routes.start(o.iptablesResync());
        started.push(routes);
    }

    /**
     * Ours (issue 37): the CNI plugin's fast path, a unix socket beside subnet.env (/run/flannel/cni.sock,
     * where the launcher looks) that runs the plugin's code in this warm JVM; started once subnet.env is
     * written, so a pod attached before gets the plugin's own JVM. FLANNELD_CNI_FAST_PATH=false: no socket.
     */
    private void startCniServer(Path subnetFile) {
        if ("false".equals(env.get("FLANNELD_CNI_FAST_PATH"))) {
            return;
        }
        Path socket = subnetFile.toAbsolutePath().resolveSibling("cni.sock");
        try {
            CniServer server = CniServer.start(socket, subnetFile, CNI_IN_FLIGHT);
            started.push(server);
            metrics.setCniFastPath(() -> new long[] {server.served(), server.fallbacks(), server.refused()});
            LOG.info("cni fast path listening socket={} maxInFlight={}", socket, CNI_IN_FLIGHT);
            // C1 compiles a method after ~200 calls; a node starts fewer pods: rehearse them once, off the lease path
            server.warmUp(subnetFile, CniServer.WARM_UP_PODS, (ms, ok) ->
                LOG.info("cni fast path warmed up socket={} calls={} ok={} ms={}", socket, 2 * CniServer.WARM_UP_PODS, ok, ms));
        } catch (IOException | RuntimeException e) {
            LOG.warn("cni fast path not started socket={} error={}", socket, e.toString()); // the plugin runs its own JVM
        }
    }

    /** §3: written once, atomically; a failure is only a warning (and the daemon is then never ready). */
    private void writeSubnetEnv(Path file, NetConf conf, Network network) {
        Lease lease = network.lease();
        boolean v4 = conf.enableIPv4();
        boolean v6 = conf.enableIPv6();
        try {
            new SubnetEnv(v4 ? conf.network() : null, v4 ? lease.subnet() : null, v6 ? conf.ipv6Network() : null,
                    v6 ? lease.ipv6Subnet() : null, network.mtu(), o.ipMasq()).write(file);
            ready.set(true);
            LOG.info("subnet.env written path={} lease={} mtu={}", file, lease.key(), network.mtu());
        } catch (IOException | RuntimeException e) {
            LOG.warn("Failed to write subnet file: {}", e.getMessage());
        }
    }

    /** §9.5 step 14: a systemd unit of Type=notify waits for READY=1; a failure is logged, never fatal. */
    private void notifySystemd() {
        try {
            SdNotify.notify(env, "READY=1").ifPresent(socket -> LOG.info("sd_notify READY=1 sent socket={}", socket));
        } catch (NetlinkException | RuntimeException e) {
            LOG.warn("sd_notify READY=1 failed error={}", e.getMessage());
        }
    }

    private static void completeLease(SubnetManager subnets, Lease lease) throws InterruptedException {
        try {
            subnets.completeLease(lease);
        } catch (IOException | RuntimeException e) {
            LOG.error("CompleteLease execute error err: {}", e.getMessage());
        }
    }

    private void closeAll() {
        while (!started.isEmpty()) {
            AutoCloseable c = started.pop();
            try {
                c.close();
            } catch (Exception e) {
                LOG.warn("close failed object={} error={}", c.getClass().getSimpleName(), e.toString());
            }
        }
    }
}
