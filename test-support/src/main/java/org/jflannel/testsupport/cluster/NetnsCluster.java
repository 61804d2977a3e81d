package org.jflannel.testsupport.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.jflannel.linuxnet.netlink.RtNetlink;

/**
 * A flannel cluster on one machine, made of network namespaces: a fabric namespace (bridge, and
 * etcd or the Kubernetes mock API server), N node namespaces each running a real {@code flanneld},
 * and pods attached through the real CNI chain. Shared by the demo ({@link Demo}) and the
 * end-to-end tests. Everything lives in namespaces named after a random run id and in one run
 * directory; {@link #close()} (also run by a shutdown hook on Ctrl-C) kills the processes it started
 * by PID, deletes its namespaces and removes the run directory.
 */
public final class NetnsCluster implements AutoCloseable {
    private static final Duration CONVERGED_WITHIN = Bounds.scaled(Duration.ofSeconds(60));
    private static final int UPSTREAM_LOG_TAIL = 40;

    private final ClusterOptions options;
    private final ClusterRun run;
    private final ClusterNames names;
    private final Path runDir;
    private final Topology topology;
    private final List<ClusterNode> nodes = new ArrayList<>();
    private LeaseSource leaseSource;

    private NetnsCluster(ClusterOptions options, ClusterRun run) {
        this.options = options;
        this.run = run;
        this.names = run.names();
        this.runDir = run.runDir();
        this.topology = run.topology();
        run.teardownFirst(this::tearDown);
    }

    /** Builds and starts the whole cluster; on any failure everything made so far is removed again. */
    public static NetnsCluster start(ClusterOptions options) throws Exception {
        NetnsCluster c = new NetnsCluster(options, ClusterRun.open("netns cluster", options.runBase(), options.progress()));
        c.run.boot(c::boot);
        return c;
    }

    private void boot() throws Exception {
        checkLaunchers();
        progress("run " + names.id() + ": " + options.nodes() + " nodes, mode=" + options.mode().name().toLowerCase()
                + ", backend=" + options.backend() + (options.upstreamNodes().isEmpty() ? ""
                : ", upstream flanneld " + UpstreamFlannel.VERSION + " on nodes " + options.upstreamNodes())
                + (options.daemonEnv().isEmpty() ? "" : ", daemon environment " + new TreeMap<>(options.daemonEnv()))
                + (options.dualStack() ? ", dual stack with IPv6 network " + options.ipv6Network() : "")
                + ", run dir " + runDir);
        topology.build(options.nodes(), options.dualStack());
        progress("namespaces: fabric " + names.fabric() + " (bridge " + ClusterNames.fabricIp() + "/24"
                + (options.dualStack() ? " and " + ClusterNames.FABRIC_IPV6 + "/" + ClusterNames.UNDERLAY_V6_PREFIX_LEN : "")
                + "), nodes " + names.node(1) + (options.nodes() > 1 ? ".." + names.node(options.nodes()) : ""));
        leaseSource = LeaseSource.start(options, names, runDir, this::progress);
        for (int i = 1; i <= options.nodes(); i++) {
            nodes.add(new ClusterNode(i, topology.node(i), runDir.resolve(ClusterNames.nodeName(i)),
                    leaseSource.flanneldArgs(), daemonEnv(i), this::launcher, options.kindOf(i)));
        }
        // upstream v0.20.2 may miss leases written in a burst while its watch starts: it starts once
        // ours are ready, so it finds their leases in its first snapshot
        startAndAwait(nodes.stream().filter(n -> n.kind() == NodeKind.JFLANNEL).toList());
        startAndAwait(nodes.stream().filter(n -> n.kind() == NodeKind.UPSTREAM).toList());
        awaitConverged();
        progress((options.dualStack() ? "dual stack, both families: " : "")
                + (udp() ? "overlay: every node has flannel0 and has applied every peer's lease"
                : wireguard() ? "overlay: every node has flannel-wg and has applied every peer's lease"
                : hostGw() ? "routes: every node routes each peer's subnet via the peer's address on " + ClusterNames.NODE_IFACE
                : options.backendType().equals("ipip") ? "overlay: every node routes each peer's subnet via the peer's address through flannel.ipip"
                : options.backendType().equals("ipsec") ? "overlay: every node holds the three XFRM policies of each peer"
                : "overlay: every node holds a neighbour, FDB entry and route for each peer"));
        attachPods();
    }

    private Map<String, String> daemonEnv(int i) {
        Map<String, String> env = new HashMap<>(options.daemonEnv());
        env.putAll(leaseSource.env(i));
        // every node its own WireGuard key (upstream's default /run/flannel/wgkey would be shared by all on one host)
        env.put("WIREGUARD_KEY_FILE", runDir.resolve(ClusterNames.nodeName(i)).resolve("wgkey").toString());
        // ipsec: every node its own charon (its pidfile is fixed at /var/run/charon.pid): the node's directory on its /run
        env.putIfAbsent("JFLANNEL_IPSEC_DIR", runDir.resolve(ClusterNames.nodeName(i)).resolve("ipsec").toString());
        env.putIfAbsent("JFLANNEL_IPSEC_PRIVATE_RUN", "1");
        return env;
    }

    private void startAndAwait(List<ClusterNode> some) throws Exception {
        for (ClusterNode n : some) {
            progress(started(n));
        }
        for (ClusterNode n : some) {
            NodeLease l = n.awaitReady();
            progress(daemonName(n) + " " + n.name() + ": ready, lease " + l.subnet() + " publicIp "
                    + l.publicIp().getHostAddress() + " mtu " + l.mtu());
        }
    }

    private String started(ClusterNode n) throws IOException {
        ManagedProcess p = n.start();
        return daemonName(n) + " " + n.name() + ": started pid=" + p.pid() + " log " + p.log();
    }

    private static String daemonName(ClusterNode n) {
        return n.kind() == NodeKind.UPSTREAM ? "upstream flanneld " + UpstreamFlannel.VERSION : "flanneld";
    }

    /** The binary each kind runs; upstream's is looked up (and its absence reported) only when a node runs it. */
    private Path launcher(NodeKind kind) {
        return kind == NodeKind.UPSTREAM ? options.upstreamFlanneld() : options.flanneldLauncher();
    }

    /**
     * Stops node {@code i}'s daemon (SIGTERM) and starts {@code kind}'s in its place, then waits until
     * it is ready and the cluster has converged again. Its lease is kept (both daemons take the lease
     * of their public IP from etcd again); its backend data may change, under the running peers.
     * Returns the lease after the switch. Upstream may panic on SIGTERM (its {@code watchSubnets}
     * bug): its exit code is only logged.
     */
    public NodeLease restartAs(int i, NodeKind kind) throws Exception {
        ClusterNode n = node(i);
        String was = daemonName(n);
        int exit = n.stop();
        progress(was + " " + n.name() + ": stopped, exit code " + exit + "; switching to " + kind.name().toLowerCase(
                java.util.Locale.ROOT));
        ManagedProcess p = n.start(kind);
        progress(daemonName(n) + " " + n.name() + ": started pid=" + p.pid() + " log " + p.log());
        NodeLease l = n.awaitReady();
        progress(daemonName(n) + " " + n.name() + ": ready, lease " + l.subnet());
        awaitConverged();
        return l;
    }

    private void checkLaunchers() {
        if (!options.upstreamNodes().isEmpty()) {
            options.upstreamFlanneld(); // skips now (or fails on a wrong binary), naming it, before anything is built
        }
        for (Path p : List.of(options.flanneldLauncher(), options.cniLauncher())) {
            if (!Files.isExecutable(p)) {
                throw new IllegalStateException("launcher " + p + " missing or not executable; build first: "
                        + "mvn -B -q package -DskipTests -pl e2e -am");
            }
        }
    }

    private void attachPods() throws Exception {
        CniChain cni = new CniChain(options.cniLauncher());
        for (ClusterNode n : nodes) {
            for (int j = 1; j <= options.podsPerNode(); j++) {
                run.attachPodDual(n.index(), j, ns -> cni.addDual(n, ns, options.dualStack()), "the CNI chain");
            }
        }
        if (options.dualStack()) {
            awaitIpv6Settled();
        }
    }

    /**
     * Dual stack: waits until no IPv6 address in any pod or node is still tentative (duplicate address
     * detection, about 1 s after a link comes up: the pods' and cni0's link-local addresses), as a
     * pod is not ready before; without it the first IPv6 echoes from a pod can go unanswered.
     */
    private void awaitIpv6Settled() throws Exception {
        List<String> all = new ArrayList<>();
        nodes.forEach(n -> all.add(n.namespace()));
        run.pods().forEach(p -> all.add(p.namespace()));
        for (String ns : all) {
            Wait.until("no tentative IPv6 address in " + ns, Duration.ofSeconds(15), () -> Cmd.run(Duration.ofSeconds(10),
                    List.of("ip", "-n", ns, "-6", "addr", "show", "tentative")).orThrow().stdout().isBlank());
        }
        progress("IPv6: no tentative address left in the nodes and pods (duplicate address detection done)");
    }

    /**
     * Waits until every node's kernel holds the entries of every other node's current lease (vxlan),
     * or, for udp (no kernel entries per peer), until flannel0 routes the network and the daemon
     * reports every other lease applied, or, for host-gw, until each peer's subnet is routed via the
     * peer's address on eth0.
     */
    public void awaitConverged() throws Exception {
        awaitConvergedV4();
        if (options.dualStack()) {
            awaitConvergedV6();
        }
    }

    /**
     * Dual stack: the IPv6 half of {@link #awaitConverged}. vxlan: every node's {@code flannel-v6.1}
     * holds a neighbour, FDB entry (to the peer's IPv6 underlay address) and route for each peer's IPv6
     * subnet; wireguard: {@code flannel-wg-v6} is there with the route of the IPv6 network; host-gw:
     * each peer's IPv6 subnet is routed via its IPv6 address on eth0.
     */
    private void awaitConvergedV6() throws Exception {
        List<NodeLease> leases = ipv6Leases();
        for (ClusterNode n : nodes) {
            List<NodeLease> peers = leases.stream().filter(l -> !l.node().equals(n.name())).toList();
            if (wireguard()) {
                Wait.until(n.name() + " flannel-wg-v6 up with the route of " + options.ipv6Network(), CONVERGED_WITHIN,
                        () -> {
                            FlannelEntries tun = n.wireguardV6Device();
                            return tun.linkPresent() && !tun.routesTo(options.ipv6Network()).isEmpty();
                        });
            } else if (hostGw()) {
                Wait.until(n.name() + " IPv6 routes to peers " + peers, CONVERGED_WITHIN, n::hostGwRoutes,
                        e -> e.routesVia(peers));
            } else if (!udp()) {
                Wait.until(n.name() + " flannel-v6.1 programmed for peers " + peers, CONVERGED_WITHIN,
                        n::entriesV6, e -> e.covers(peers));
            }
        }
    }

    private void awaitConvergedV4() throws Exception {
        List<NodeLease> leases = leases();
        for (ClusterNode n : nodes) {
            List<NodeLease> peers = leases.stream().filter(l -> !l.node().equals(n.name())).toList();
            if (udp()) {
                Wait.until(n.name() + " flannel0 up with a route and " + peers.size() + " peers applied", CONVERGED_WITHIN,
                        () -> {
                            FlannelEntries tun = n.udpDevice();
                            return tun.linkPresent() && !tun.routesTo(options.network()).isEmpty()
                                    && n.peersApplied(peers);
                        });
                continue;
            }
            if (wireguard()) {
                Wait.until(n.name() + " flannel-wg up with a route and " + peers.size() + " peers applied", CONVERGED_WITHIN,
                        () -> {
                            FlannelEntries tun = n.wireguardDevice();
                            return tun.linkPresent() && !tun.routesTo(options.network()).isEmpty()
                                    && n.peersApplied(peers);
                        });
                continue;
            }
            if (hostGw()) {
                Wait.until(n.name() + " routes to peers " + peers, CONVERGED_WITHIN,
                        n::hostGwRoutes, e -> e.routesVia(peers));
                continue;
            }
            if (options.backendType().equals("ipsec")) { // no device: three XFRM policies per peer (backend-ipsec)
                Wait.until(n.name() + " ipsec policies for peers " + peers, CONVERGED_WITHIN, () -> Cmd.run(Duration.ofSeconds(30),
                        List.of("ip", "-n", n.namespace(), "xfrm", "policy", "list")).stdout().split("tmpl src", -1).length - 1 >= 3 * peers.size());
                continue;
            }
            if (options.backendType().equals("ipip")) {
                Wait.until(n.name() + " flannel.ipip routes to peers " + peers, CONVERGED_WITHIN,
                        n::ipipDevice, e -> e.linkPresent() && e.routesVia(peers));
                continue;
            }
            Wait.until(n.name() + " programmed for peers " + peers, CONVERGED_WITHIN,
                    n::entries, e -> e.covers(peers));
        }
    }

    private boolean udp() {
        return options.backendType().equals("udp");
    }

    private boolean wireguard() {
        return options.backendType().equals("wireguard");
    }

    /** host-gw, or extension, whose clusters in the tests run host-gw's route per peer as their commands. */
    private boolean hostGw() {
        return options.backendType().equals("host-gw") || options.backendType().equals("extension");
    }

    public ClusterOptions options() {
        return options;
    }

    public String runId() {
        return names.id();
    }

    public ClusterNames names() {
        return names;
    }

    public Path runDir() {
        return runDir;
    }

    public List<ClusterNode> nodes() {
        return List.copyOf(nodes);
    }

    /** Node {@code i}, 1-based. */
    public ClusterNode node(int i) {
        return nodes.get(i - 1);
    }

    public List<Pod> pods() {
        return run.pods();
    }

    /** Names of every namespace this run created (fabric, nodes, pods). */
    public List<String> namespaces() {
        return topology.namespaceNames();
    }

    /** Every long-running process this run started: etcd or the mock API server, and each node's current flanneld. */
    public List<ManagedProcess> processes() {
        List<ManagedProcess> out = leaseSource == null ? new ArrayList<>() : leaseSource.processes();
        nodes.forEach(n -> n.daemon().ifPresent(out::add));
        return out;
    }

    /** Every node's current lease (from its subnet.env), in node order. */
    public List<NodeLease> leases() throws IOException {
        List<NodeLease> out = new ArrayList<>();
        for (ClusterNode n : nodes) {
            out.add(n.lease());
        }
        return out;
    }

    /** Every node's IPv6 lease (from its subnet.env's {@code FLANNEL_IPV6_SUBNET}), in node order; dual stack only. */
    public List<NodeLease> ipv6Leases() throws IOException {
        List<NodeLease> out = new ArrayList<>();
        for (ClusterNode n : nodes) {
            out.add(n.ipv6Lease());
        }
        return out;
    }

    /** The ping matrix over {@code family}'s addresses ({@code ping -6} to each pod's IPv6 address). */
    public PingMatrix pingMatrix(Pod.Family family) throws IOException, InterruptedException {
        return PingMatrix.measure(run.pods(), family);
    }

    /** One ICMP echo from {@code from} to {@code to}'s address, 2 s to answer. */
    public boolean ping(Pod from, Pod to) throws IOException, InterruptedException {
        return PingMatrix.echo(from, to);
    }

    /** One echo of {@code family} ({@code ping -6} to the IPv6 address), 2 s to answer. */
    public boolean ping(Pod from, Pod to, Pod.Family family) throws IOException, InterruptedException {
        return PingMatrix.echo(from, to, family);
    }

    /** A bounded ping run: {@code count} echoes every {@code intervalMs} ms, each given 1 s to answer. */
    public PingStats pingRun(Pod from, Pod to, int count, int intervalMs) throws IOException, InterruptedException {
        int deadline = count * intervalMs / 1000 + 10;
        Cmd.Result r = Cmd.run(Duration.ofSeconds(deadline + 20), List.of("ip", "netns", "exec", from.namespace(),
                "ping", "-n", "-q", "-c", Integer.toString(count), "-i", String.valueOf(intervalMs / 1000.0),
                "-W", "1", "-w", Integer.toString(deadline), to.ip()));
        return PingStats.parse(r.stdout());
    }

    /** The ping matrix: for every ordered pair of distinct pods, whether the echo came back. */
    public PingMatrix pingMatrix() throws IOException, InterruptedException {
        return PingMatrix.measure(run.pods());
    }

    /**
     * Sets the MTU of node {@code i}'s link on the fabric side (its veth end in the bridge): frames
     * larger than that are dropped silently both ways (the bridge will not forward them to the port,
     * the veth will not take them from the node), an MTU black hole with no ICMP and no PMTU cache
     * entry left behind on either node.
     */
    public void setUnderlayLinkMtu(int i, int mtu) throws Exception {
        String port = ClusterNames.fabricPort(i);
        topology.fabric().run(() -> {
            try (RtNetlink nl = RtNetlink.open()) {
                nl.setMtu(Topology.index(nl, port), mtu);
            }
        });
    }

    // ---- lease source helpers ----

    /** etcd key of a lease: {@code /coreos.com/network/subnets/10.244.3.0-24}. */
    public static String leaseKey(NodeLease lease) {
        return FabricEtcd.PREFIX + "/subnets/" + lease.etcdKeyName();
    }

    /**
     * etcd key of a dual-stack lease, both halves as upstream joins them:
     * {@code /coreos.com/network/subnets/10.244.3.0-24&fd6a:f100:0:103::-64}.
     */
    public static String leaseKey(NodeLease lease, NodeLease ipv6Lease) {
        return leaseKey(lease) + "&" + ipv6Lease.etcdKeyName();
    }

    /** Deletes {@code lease} in etcd (etcd mode); returns the number of keys deleted. */
    public int deleteLease(NodeLease lease) throws IOException, InterruptedException {
        return requireEtcd().delete(leaseKey(lease));
    }

    /** Writes {@code value} to {@code key} in etcd (etcd mode), e.g. a lease with bad backend data. */
    public void etcdPut(String key, String value) throws IOException, InterruptedException {
        requireEtcd().put(key, value);
    }

    /** {@link #etcdPut} with the key attached to an etcd lease of {@code ttl}, as a real flanneld writes its subnet lease. */
    public void etcdPutWithTtl(String key, String value, Duration ttl) throws IOException, InterruptedException {
        requireEtcd().putWithTtl(key, value, ttl);
    }

    /**
     * Rewrites {@code key} keeping its etcd lease (etcd mode): upstream flanneld rewrites a lease of its
     * own that lost its etcd lease (a plain {@link #etcdPut}), not one that only changed.
     */
    public void etcdPutKeepingLease(String key, String value) throws IOException, InterruptedException {
        requireEtcd().putKeepingLease(key, value);
    }

    public String etcdGet(String key) throws IOException, InterruptedException {
        return requireEtcd().get(key);
    }

    public int etcdDelete(String key) throws IOException, InterruptedException {
        return requireEtcd().delete(key);
    }

    /** A Node object as the mock API server holds it (kube mode). */
    public JsonNode kubeNode(String name) throws IOException, InterruptedException {
        return requireKube().getNode(name);
    }

    /**
     * Every request the mock API server received from the daemons (kube mode), each an object with
     * {@code verb}, {@code resource} (as RBAC names it: {@code nodes/status}), {@code name},
     * {@code contentType}, {@code userAgent}.
     */
    public JsonNode kubeApiCalls() throws IOException, InterruptedException {
        return requireKube().calls();
    }

    /** Creates a Node object from JSON (kube mode), e.g. a node that another flannel annotated. */
    public JsonNode createKubeNode(String nodeJson) throws IOException, InterruptedException {
        return requireKube().createNodeJson(nodeJson);
    }

    /** Any object (kube mode: a Namespace, Pod, NetworkPolicy, ...) created or replaced, as {@code kubectl apply} would. */
    public JsonNode applyKubeObject(String objectJson) throws IOException, InterruptedException {
        return requireKube().applyJson(objectJson);
    }

    /** The object of the JSON's kind, namespace and name deleted (kube mode). */
    public void deleteKubeObject(String objectJson) throws IOException, InterruptedException {
        requireKube().deleteJson(objectJson);
    }

    /** Deletes a Node object (kube mode), as {@code kubectl delete node} would. */
    public void deleteKubeNode(String name) throws IOException, InterruptedException {
        requireKube().deleteNode(name);
    }

    /** A strategic merge patch of a Node (kube mode; {@code null} deletes a key), e.g. to drop its annotations. */
    public JsonNode patchKubeNode(String name, String patchJson) throws IOException, InterruptedException {
        return requireKube().patchNode(name, patchJson);
    }

    /** API server outage (kube mode): stops listening and drops every connection; the stored Nodes stay. */
    public void stopKubeApi() throws IOException, InterruptedException {
        requireKube().fault("stop-serving");
    }

    /** Ends the outage: the API server listens again on the same address. */
    public void resumeKubeApi() throws IOException, InterruptedException {
        requireKube().fault("resume-serving");
    }

    /** While held (kube mode), open watches get no changes; false lets them have them. */
    public void holdKubeWatches(boolean on) throws IOException, InterruptedException {
        requireKube().fault(on ? "hold-watches" : "release-watches");
    }

    /** Compacts the API server's history and answers every open watch {@code 410 Gone}: clients must relist. */
    public void expireKubeWatches() throws IOException, InterruptedException {
        requireKube().fault("expire-watches");
    }

    /** Kubeconfig of the mock API server (kube mode). */
    public Path kubeconfig() {
        return requireKube().kubeconfig();
    }

    private FabricEtcd requireEtcd() {
        return leaseSource.etcd();
    }

    private KubeApi requireKube() {
        return leaseSource.kube();
    }

    void progress(String line) {
        run.progress(line);
    }

    // ---- teardown ----

    /** Kills every process this run started (by PID), deletes its namespaces and its run directory. */
    @Override
    public void close() throws Exception {
        run.close();
    }

    /** What this cluster started, ended before the run's namespaces go: the daemons (SIGKILL), then etcd or the API server. */
    private void tearDown(Cleanup cleanup) {
        for (ClusterNode n : nodes) {
            cleanup.attempt(n::kill);
        }
        reportUpstreamLogs();
        if (leaseSource != null) {
            cleanup.attempt(leaseSource::close);
        }
    }

    /** The run directory goes with the cluster: what each upstream daemon logged is kept in the test's output. */
    private void reportUpstreamLogs() {
        for (ClusterNode n : nodes) {
            if (Files.exists(n.dir().resolve("upstream-flanneld.log"))) {
                try {
                    List<String> lines = Files.readAllLines(n.dir().resolve("upstream-flanneld.log"));
                    progress("upstream flanneld " + n.name() + ": last " + Math.min(UPSTREAM_LOG_TAIL, lines.size())
                            + " of " + lines.size() + " log lines:\n  " + String.join("\n  ",
                            lines.subList(Math.max(0, lines.size() - UPSTREAM_LOG_TAIL), lines.size())));
                } catch (IOException e) {
                    progress("upstream flanneld " + n.name() + ": cannot read its log: " + e.getMessage());
                }
            }
        }
    }
}
