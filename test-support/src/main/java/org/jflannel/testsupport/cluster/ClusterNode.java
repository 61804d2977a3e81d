package org.jflannel.testsupport.cluster;

import java.io.IOException;
import java.net.InetAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import org.jflannel.core.MacAddress;
import org.jflannel.linuxnet.netlink.FdbEntry;
import org.jflannel.linuxnet.netlink.IpPrefix;
import org.jflannel.linuxnet.netlink.Neighbour;
import org.jflannel.linuxnet.netlink.Route;
import org.jflannel.linuxnet.netlink.RtNetlink;
import org.jflannel.linuxnet.netns.NetNs;
import org.jflannel.linuxnet.sys.Sysctl;

/**
 * One node of the cluster: its namespace, its directory in the run directory ({@code subnet.env},
 * the daemon's log, CNI state), and its {@code flanneld} process, started as
 * {@code ip netns exec <ns> <flanneld> ...} and ended only by its PID. The daemon is ours or the real
 * upstream flanneld ({@link NodeKind}), with the same flags; a node can be restarted as the other
 * kind, keeping its lease. Also the node-side test helpers: its lease, its kernel entries on
 * {@code flannel.1}, and hand edits of those entries.
 */
public final class ClusterNode {
    public static final String VXLAN_DEVICE = "flannel.1";
    public static final String UDP_DEVICE = "flannel0";
    public static final String WIREGUARD_DEVICE = "flannel-wg";
    /** The vxlan backend's IPv6 device in dual stack. */
    public static final String VXLAN_V6_DEVICE = "flannel-v6.1";
    /** The wireguard backend's IPv6 device in dual stack, Mode separate. */
    public static final String WIREGUARD_V6_DEVICE = "flannel-wg-v6";
    static final int HEALTHZ_PORT = 8081;
    private static final Duration READY_WITHIN = Bounds.scaled(Duration.ofSeconds(90));

    private final int index;
    private final NetNs ns;
    private final Path dir;
    private final List<String> flanneldArgs;
    private final Map<String, String> env;
    private final Function<NodeKind, Path> launchers;
    private NodeKind kind;
    private ManagedProcess daemon;
    private long logOffset;
    private SubnetEnvFile.Stamp subnetFileBefore;
    private int starts;

    /** {@code launchers}: the binary each kind runs (resolved only when a node first runs that kind). */
    ClusterNode(int index, NetNs ns, Path dir, List<String> flanneldArgs, Map<String, String> env,
                Function<NodeKind, Path> launchers, NodeKind kind) {
        this.index = index;
        this.ns = ns;
        this.dir = dir;
        this.env = Map.copyOf(env);
        this.flanneldArgs = List.copyOf(flanneldArgs);
        this.launchers = launchers;
        this.kind = kind;
    }

    public int index() {
        return index;
    }

    /** Node name ({@code node1}, ...), as the Kubernetes API and the run directory know it. */
    public String name() {
        return ClusterNames.nodeName(index);
    }

    public String namespace() {
        return ns.name();
    }

    NetNs ns() {
        return ns;
    }

    public Path dir() {
        return dir;
    }

    public Path subnetFile() {
        return dir.resolve("subnet.env");
    }

    /** What this node runs now (or ran last, or will run at its first start). */
    public synchronized NodeKind kind() {
        return kind;
    }

    /** The current kind's log: {@code flanneld.log} (ours) or {@code upstream-flanneld.log}; every start appends. */
    public Path log() {
        return dir.resolve(kind() == NodeKind.UPSTREAM ? "upstream-flanneld.log" : "flanneld.log");
    }

    public InetAddress publicIp() {
        return Inet.parse(ClusterNames.nodeIp(index));
    }

    /** The node's IPv6 underlay address in a dual-stack run (flanneld finds it on eth0 by itself). */
    public InetAddress publicIpv6() {
        return Inet.parse(ClusterNames.nodeIpv6(index));
    }

    /** The running (or last) flanneld process; empty before the first start. */
    public Optional<ManagedProcess> daemon() {
        return Optional.ofNullable(daemon);
    }

    /** The command line flanneld is started with (for the demo's explore hints and reports). */
    public List<String> command() {
        return command(kind());
    }

    /** The command line of {@code k}: the same flags for both kinds (ours are upstream's), per-node subnet file. */
    List<String> command(NodeKind k) {
        List<String> cmd = new ArrayList<>(List.of("ip", "netns", "exec", ns.name(), launchers.apply(k).toString()));
        cmd.addAll(flanneldArgs);
        cmd.add("--subnet-file=" + subnetFile());
        return cmd;
    }

    /**
     * Starts flanneld (it must not be running) as the node's current kind. Each of {@code extraArgs}
     * ({@code --name=value}) replaces the usual flag of that name, or is appended when there is none.
     */
    public synchronized ManagedProcess start(String... extraArgs) throws IOException {
        return start(kind, extraArgs);
    }

    /**
     * Starts {@code k}'s flanneld (none must be running); from now on the node is of that kind. Its
     * lease stays: both daemons take the lease of their public IP from etcd again.
     */
    public synchronized ManagedProcess start(NodeKind k, String... extraArgs) throws IOException {
        if (daemon != null && daemon.isAlive()) {
            throw new IllegalStateException("flanneld on " + name() + " is still running: " + daemon);
        }
        List<String> cmd = withFlags(command(k), List.of(extraArgs));
        kind = k;
        Files.createDirectories(dir);
        logOffset = Files.exists(log()) ? Files.size(log()) : 0;
        subnetFileBefore = subnetEnv().stamp();
        starts++;
        Files.writeString(log(), "=== jflannel harness: start " + starts + " (" + k.name().toLowerCase(java.util.Locale.ROOT)
                + "): " + String.join(" ", cmd) + "\n",
                StandardCharsets.UTF_8, java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.APPEND);
        daemon = ManagedProcess.start((k == NodeKind.UPSTREAM ? "upstream-flanneld@" : "flanneld@") + name(), cmd, env,
                log());
        return daemon;
    }

    static List<String> withFlags(List<String> base, List<String> extra) {
        List<String> cmd = new ArrayList<>(base);
        for (String flag : extra) {
            String name = flag.contains("=") ? flag.substring(0, flag.indexOf('=') + 1) : flag;
            int at = -1;
            for (int i = 0; i < cmd.size(); i++) {
                if (cmd.get(i).equals(flag) || name.endsWith("=") && cmd.get(i).startsWith(name)) {
                    at = i;
                }
            }
            if (at >= 0) {
                cmd.set(at, flag);
            } else {
                cmd.add(flag);
            }
        }
        return cmd;
    }

    /**
     * Waits until flanneld wrote subnet.env and (ours) answers {@code /readyz} with 200, or (upstream,
     * which has no readiness endpoint) wrote subnet.env anew since this start; fails fast if it died.
     */
    public NodeLease awaitReady() throws Exception {
        NodeKind k = kind();
        SubnetEnvFile.Stamp before = subnetFileBefore;
        SubnetEnvFile env = subnetEnv();
        Readiness.await(k == NodeKind.UPSTREAM ? "upstream flanneld" : "flanneld", name(), daemon, READY_WITHIN,
                () -> k == NodeKind.UPSTREAM ? env.writtenSince(before)
                        : Files.exists(subnetFile()) && Readiness.readyz(ns, HEALTHZ_PORT));
        return lease();
    }

    /**
     * udp and wireguard, whose peers are in a process or a table no route shows: whether the daemon
     * applied exactly {@code peers}: ours says how many in /metrics; upstream logs {@code Subnet added:
     * <subnet>} for each lease its udp or wireguard backend programs (and again for a lease whose
     * attributes changed), so every peer must have been logged since this start.
     */
    public boolean peersApplied(List<NodeLease> peers) throws Exception {
        if (kind() == NodeKind.JFLANNEL) {
            return leasesApplied() == peers.size();
        }
        String log = logSinceStart();
        return peers.stream().allMatch(p -> log.contains("Subnet added: " + p.subnet()));
    }

    /** SIGKILL: the daemon gets no chance to clean up (a crash). */
    public void kill() throws InterruptedException {
        if (daemon != null) {
            daemon.kill();
        }
    }

    /** SIGTERM (then SIGKILL after 10 s); returns the exit code, or -1 when it was not running. */
    public int stop() throws InterruptedException {
        return daemon == null ? -1 : daemon.terminate();
    }

    /** What flanneld logged since its last start. */
    public String logSinceStart() throws IOException {
        byte[] all = Files.exists(log()) ? Files.readAllBytes(log()) : new byte[0];
        int from = (int) Math.min(logOffset, all.length);
        return new String(all, from, all.length - from, StandardCharsets.UTF_8);
    }

    /** This node's lease from its subnet.env ({@code FLANNEL_SUBNET}, {@code FLANNEL_MTU}). */
    public NodeLease lease() throws IOException {
        return subnetEnv().lease(name(), publicIp());
    }

    /** This node's IPv6 lease from its subnet.env ({@code FLANNEL_IPV6_SUBNET}), with its IPv6 underlay address; dual stack only. */
    public NodeLease ipv6Lease() throws IOException {
        return subnetEnv().ipv6Lease(name(), publicIpv6());
    }

    public Map<String, String> readSubnetEnv() throws IOException {
        return subnetEnv().read();
    }

    private SubnetEnvFile subnetEnv() {
        return new SubnetEnvFile(subnetFile());
    }

    /** The UDP backend's TUN ({@code flannel0}) and its main-table routes, dumped now (link null when absent). */
    public FlannelEntries udpDevice() throws Exception {
        return new NodeDevices(ns).routesOf(UDP_DEVICE);
    }

    /** The ipip backend's {@code flannel.ipip} and its routes (one onlink route per peer). */
    public FlannelEntries ipipDevice() throws Exception {
        return new NodeDevices(ns).routesOf("flannel.ipip");
    }

    /** The wireguard backend's {@code flannel-wg} (a TUN in userspace mode) and its routes. */
    public FlannelEntries wireguardDevice() throws Exception {
        return new NodeDevices(ns).routesOf(WIREGUARD_DEVICE);
    }

    /**
     * The kernel's counters of device {@code dev} in this node, read from sysfs inside the namespace
     * ({@code ip netns exec} mounts the namespace's own /sys), so they hold whichever daemon runs.
     */
    public LinkStats linkStats(String dev) throws IOException, InterruptedException {
        return LinkStats.read(ns.name(), dev);
    }

    /** The node's UDP counters ({@code /proc/net/snmp}, which shows the namespace of the process reading it). */
    public UdpSnmp udpSnmp() throws IOException, InterruptedException {
        return UdpSnmp.read(ns.name());
    }

    /** Writes sysctl {@code key} (e.g. {@code net/ipv6/conf/flannel0/disable_ipv6}) inside this node's namespace. */
    public void writeSysctl(String key, String value) throws Exception {
        ns.run(() -> Sysctl.write(key, value));
    }

    /**
     * The daemon's {@code flanneld_leases} gauge (other nodes' leases it applied), read from /metrics:
     * the UDP backend keeps its peers in the process, so this is where convergence shows.
     */
    public long leasesApplied() throws Exception {
        return (long) metric("flanneld_leases");
    }

    /** One sample from the daemon's /metrics, e.g. {@code flanneld_udp_packets_total{direction="to_peers"}}; -1 when absent. */
    public double metric(String sample) throws Exception {
        if (kind() == NodeKind.UPSTREAM) {
            throw new IllegalStateException(name() + " runs upstream flanneld, which serves no /metrics");
        }
        NsHttp.Response r = NsHttp.get(ns, "127.0.0.1", HEALTHZ_PORT, "/metrics");
        return r.body().lines().filter(l -> l.startsWith(sample + " "))
                .mapToDouble(l -> Double.parseDouble(l.substring(sample.length() + 1).strip()))
                .findFirst().orElse(-1);
    }

    /** The daemon's {@code /peers} document (the peer prober's verdicts, JSON); throws unless 200. */
    public String peers() throws Exception {
        return document("/peers");
    }

    /** A JSON document the daemon serves on its health port ({@code /peers}, {@code /policy}); throws unless 200. */
    public String document(String path) throws Exception {
        NsHttp.Response r = NsHttp.get(ns, "127.0.0.1", HEALTHZ_PORT, path);
        if (r.status() != 200) {
            throw new IOException(path + " on " + name() + ": HTTP " + r.status() + ": " + r.body());
        }
        return r.body();
    }

    /** Replaces the neighbour entry for {@code ip} on {@code flannel.1} by hand (permanent, {@code mac}). */
    public void replaceNeighbour(InetAddress ip, MacAddress mac) throws Exception {
        ns.run(() -> {
            try (RtNetlink nl = RtNetlink.open()) {
                nl.replaceNeighbour(Neighbour.permanent(Topology.index(nl, VXLAN_DEVICE), ip, mac));
            }
        });
    }

    /** The device, neighbours, FDB entries and main-table routes on {@code flannel.1}, dumped now. */
    public FlannelEntries entries() throws Exception {
        return new NodeDevices(ns).vxlan();
    }

    /** The same on the IPv6 device {@code flannel-v6.1} (dual stack), dumped now. */
    public FlannelEntries entriesV6() throws Exception {
        return new NodeDevices(ns).vxlan(VXLAN_V6_DEVICE);
    }

    /** The wireguard backend's IPv6 device {@code flannel-wg-v6} (dual stack, Mode separate) and its routes. */
    public FlannelEntries wireguardV6Device() throws Exception {
        return new NodeDevices(ns).routesOf(WIREGUARD_V6_DEVICE);
    }

    /**
     * host-gw: the node's underlay interface ({@code eth0}) and its main-table routes, dumped now
     * (neighbours and FDB entries are not read: host-gw writes none).
     */
    public FlannelEntries hostGwRoutes() throws Exception {
        return new NodeDevices(ns).routesOf(ClusterNames.NODE_IFACE);
    }

    /** host-gw: deletes the route to {@code subnet} on {@code eth0} by hand, as an operator's mistake would. */
    public void deleteHostGwRoute(String subnet) throws Exception {
        List<Route> routes = hostGwRoutes().routesTo(subnet);
        if (routes.isEmpty()) {
            throw new IllegalStateException("no route to " + subnet + " on " + name() + " eth0");
        }
        ns.run(() -> {
            try (RtNetlink nl = RtNetlink.open()) {
                for (Route r : routes) {
                    nl.deleteRoute(r);
                }
            }
        });
    }

    /** Deletes the route to {@code subnet} on {@code flannel.1} by hand, as an operator's mistake would. */
    public void deleteRoute(String subnet) throws Exception {
        FlannelEntries e = entries();
        List<Route> routes = e.routesTo(subnet);
        if (routes.isEmpty()) {
            throw new IllegalStateException("no route to " + subnet + " on " + name() + ": " + e);
        }
        ns.run(() -> {
            try (RtNetlink nl = RtNetlink.open()) {
                for (Route r : routes) {
                    nl.deleteRoute(r);
                }
            }
        });
    }

    /** Deletes the {@code flannel.1} device by hand. */
    public void deleteVxlanDevice() throws Exception {
        ns.run(() -> {
            try (RtNetlink nl = RtNetlink.open()) {
                nl.deleteLink(VXLAN_DEVICE);
            }
        });
    }

    /** Deletes the IPv6 device {@code flannel-v6.1} by hand (dual stack). */
    public void deleteVxlanV6Device() throws Exception {
        ns.run(() -> {
            try (RtNetlink nl = RtNetlink.open()) {
                nl.deleteLink(VXLAN_V6_DEVICE);
            }
        });
    }

    /** Plants the three entries of a peer that does not exist (as if left over from a removed node). */
    public void plantPeerEntries(String subnet, InetAddress publicIp, MacAddress mac) throws Exception {
        IpPrefix dst = IpPrefix.parse(subnet);
        ns.run(() -> {
            try (RtNetlink nl = RtNetlink.open()) {
                int i = Topology.index(nl, VXLAN_DEVICE);
                nl.replaceNeighbour(Neighbour.permanent(i, dst.address(), mac));
                nl.replaceFdb(new FdbEntry(i, mac, publicIp));
                nl.replaceRoute(Route.onlink(dst, dst.address(), i));
            }
        });
    }

    @Override
    public String toString() {
        return name() + " ns=" + namespace() + " ip=" + ClusterNames.nodeIp(index);
    }
}
