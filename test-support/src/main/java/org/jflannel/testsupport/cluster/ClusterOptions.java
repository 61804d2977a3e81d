package org.jflannel.testsupport.cluster;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Consumer;

/**
 * What a {@link NetnsCluster} looks like: how many nodes and pods, which lease source (a real etcd
 * or the Kubernetes mock API server), which backend, the cluster network, iptables or nftables
 * ({@code EnableNFTables}), where the project's
 * launchers ({@code bin/flanneld}, {@code bin/flannel}) are, who hears the progress lines, and which
 * nodes (1-based) run the real upstream flanneld instead of ours (etcd mode only; {@link NodeKind}),
 * and what the daemons' environment adds to the harness's own (e.g. {@code JFLANNEL_UDP_KERNEL=0}).
 */
public record ClusterOptions(int nodes, int podsPerNode, Mode mode, String backend, String network,
                             boolean nftables, Path projectRoot, Path runBase, Consumer<String> progress,
                             Set<Integer> upstreamNodes, Map<String, String> daemonEnv, String ipv6Network) {

    public static final int MAX_NODES = 50;

    /** Where leases come from. */
    public enum Mode {
        /** flanneld in etcd mode against a real etcd in the fabric namespace. */
        ETCD,
        /** flanneld with {@code --kube-subnet-mgr} against the Kubernetes mock API server process. */
        KUBE;

        /** Parses {@code etcd} or {@code kube}, naming the option on error. */
        public static Mode parse(String text) {
            return switch (text.toLowerCase(java.util.Locale.ROOT)) {
                case "etcd" -> ETCD;
                case "kube", "kubernetes" -> KUBE;
                default -> throw new IllegalArgumentException("--mode: expected etcd or kube, got \"" + text + "\"");
            };
        }
    }

    public ClusterOptions {
        if (nodes < 1 || nodes > MAX_NODES) {
            throw new IllegalArgumentException("--nodes: expected 1.." + MAX_NODES + ", got " + nodes);
        }
        if (podsPerNode < 0 || podsPerNode > 9) {
            throw new IllegalArgumentException("pods per node: expected 0..9, got " + podsPerNode);
        }
        Objects.requireNonNull(mode, "mode");
        Objects.requireNonNull(backend, "backend");
        Objects.requireNonNull(network, "network");
        Objects.requireNonNull(projectRoot, "projectRoot");
        Objects.requireNonNull(runBase, "runBase");
        progress = progress == null ? line -> { } : progress;
        upstreamNodes = upstreamNodes == null ? Set.of() : Set.copyOf(upstreamNodes);
        for (int i : upstreamNodes) {
            if (i < 1 || i > nodes) {
                throw new IllegalArgumentException("upstream nodes: expected node numbers 1.." + nodes + ", got " + i);
            }
        }
        daemonEnv = daemonEnv == null ? Map.of() : Map.copyOf(daemonEnv);
        if (!upstreamNodes.isEmpty() && mode != Mode.ETCD) {
            throw new IllegalArgumentException("upstream nodes: only in etcd mode, got mode " + mode);
        }
        if (ipv6Network != null) {
            org.jflannel.linuxnet.netlink.IpPrefix p;
            try {
                p = org.jflannel.linuxnet.netlink.IpPrefix.parse(ipv6Network);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("IPv6 network: " + e.getMessage(), e);
            }
            if (!p.isIpv6() || p.prefixLength() > 62 || !p.network().equals(p)) {
                throw new IllegalArgumentException("IPv6 network: expected an IPv6 network of /62 or shorter "
                        + "(room for one /64 per node), host bits clear, got \"" + ipv6Network + "\"");
            }
        }
    }

    /** The IPv6 network of the dual-stack tests: a ULA /56, one /64 per node. */
    public static final String DEFAULT_IPV6_NETWORK = "fd6a:f100:0:100::/56";

    /**
     * Dual stack: {@code "EnableIPv6": true} and {@code "IPv6Network": ipv6Network} in net-conf.json, each
     * node's {@code eth0} gets a ULA address on the fabric bridge too (which flanneld finds by itself on
     * {@code --iface=eth0}), kube mode's Nodes carry both podCIDRs, and pods get an address of each family
     * through the CNI chain. {@code null}: IPv4 only (the default).
     */
    public ClusterOptions withDualStack(String ipv6Network) {
        return new ClusterOptions(nodes, podsPerNode, mode, backend, network, nftables, projectRoot, runBase, progress,
                upstreamNodes, daemonEnv, ipv6Network);
    }

    /** Whether the cluster runs dual stack ({@link #withDualStack}). */
    public boolean dualStack() {
        return ipv6Network != null;
    }

    /** Three nodes, two pods each, etcd mode, vxlan, 10.244.0.0/16; project root from {@link #findProjectRoot()}. */
    public static ClusterOptions defaults() {
        return new ClusterOptions(3, 2, Mode.ETCD, "vxlan", "10.244.0.0/16", false, findProjectRoot(),
                Path.of(System.getProperty("java.io.tmpdir")), null, Set.of(), Map.of(), null);
    }

    public ClusterOptions withNodes(int n) {
        return new ClusterOptions(n, podsPerNode, mode, backend, network, nftables, projectRoot, runBase, progress, upstreamNodes, daemonEnv, ipv6Network);
    }

    public ClusterOptions withPodsPerNode(int n) {
        return new ClusterOptions(nodes, n, mode, backend, network, nftables, projectRoot, runBase, progress, upstreamNodes, daemonEnv, ipv6Network);
    }

    public ClusterOptions withMode(Mode m) {
        return new ClusterOptions(nodes, podsPerNode, m, backend, network, nftables, projectRoot, runBase, progress, upstreamNodes, daemonEnv, ipv6Network);
    }

    public ClusterOptions withBackend(String b) {
        return new ClusterOptions(nodes, podsPerNode, mode, b, network, nftables, projectRoot, runBase, progress, upstreamNodes, daemonEnv, ipv6Network);
    }

    /** {@code "EnableNFTables": true} in net-conf.json: flanneld writes nftables tables instead of iptables chains. */
    public ClusterOptions withNftables(boolean on) {
        return new ClusterOptions(nodes, podsPerNode, mode, backend, network, on, projectRoot, runBase, progress, upstreamNodes, daemonEnv, ipv6Network);
    }

    public ClusterOptions withRunBase(Path dir) {
        return new ClusterOptions(nodes, podsPerNode, mode, backend, network, nftables, projectRoot, dir, progress, upstreamNodes, daemonEnv, ipv6Network);
    }

    public ClusterOptions withProgress(Consumer<String> p) {
        return new ClusterOptions(nodes, podsPerNode, mode, backend, network, nftables, projectRoot, runBase, p, upstreamNodes, daemonEnv, ipv6Network);
    }

    /** Nodes {@code indexes} (1-based) run upstream flanneld ({@link NodeKind#UPSTREAM}); the others run ours. */
    public ClusterOptions withUpstreamNodes(Integer... indexes) {
        return new ClusterOptions(nodes, podsPerNode, mode, backend, network, nftables, projectRoot, runBase, progress,
                Set.of(indexes), daemonEnv, ipv6Network);
    }

    /** Adds {@code env} to every daemon's environment (ours and upstream's), on top of the harness's own. */
    public ClusterOptions withDaemonEnv(Map<String, String> env) {
        return new ClusterOptions(nodes, podsPerNode, mode, backend, network, nftables, projectRoot, runBase, progress,
                upstreamNodes, env, ipv6Network);
    }

    /** What node {@code i} (1-based) runs when the cluster starts. */
    public NodeKind kindOf(int i) {
        return upstreamNodes.contains(i) ? NodeKind.UPSTREAM : NodeKind.JFLANNEL;
    }

    /** {@code net-conf.json} for this cluster; a backend given as a JSON object is its {@code Backend} verbatim. */
    public String netConfJson() {
        String b = backend.startsWith("{") ? backend : "{\"Type\":\"" + backend + "\"}";
        String v6 = ipv6Network == null ? "" : ",\"EnableIPv6\":true,\"IPv6Network\":\"" + ipv6Network + "\"";
        return "{\"Network\":\"" + network + "\"" + v6 + ",\"EnableNFTables\":" + nftables + ",\"Backend\":" + b + "}";
    }

    /** The backend's type: {@code backend} itself, or the {@code Type} of a backend given as a JSON object. */
    public String backendType() {
        if (!backend.startsWith("{")) {
            return backend;
        }
        try {
            return new com.fasterxml.jackson.databind.ObjectMapper().readTree(backend).path("Type").asText();
        } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
            throw new IllegalArgumentException("backend: not a JSON object: " + backend, e);
        }
    }

    public Path flanneldLauncher() {
        return projectRoot.resolve("bin/flanneld");
    }

    /** Upstream flanneld from {@code JFLANNEL_UPSTREAM_DIR} ({@link UpstreamFlannel}); skips when it is not provided. */
    public Path upstreamFlanneld() {
        return UpstreamFlannel.flanneld();
    }

    public Path cniLauncher() {
        return projectRoot.resolve("bin/flannel");
    }

    /**
     * The project root: system property {@code jflannel.root}, else the first directory upward from
     * the working directory that holds {@code bin/flanneld} next to a {@code pom.xml}.
     */
    public static Path findProjectRoot() {
        String prop = System.getProperty("jflannel.root");
        if (prop != null && !prop.isBlank()) {
            return Path.of(prop).toAbsolutePath().normalize();
        }
        Path dir = Path.of("").toAbsolutePath();
        for (int i = 0; i < 6 && dir != null; i++, dir = dir.getParent()) {
            if (Files.exists(dir.resolve("bin/setup")) && Files.exists(dir.resolve("pom.xml"))) {
                return dir;
            }
        }
        throw new IllegalStateException("cannot find the jflannel project root above "
                + Path.of("").toAbsolutePath() + "; set -Djflannel.root=<dir>");
    }
}
