package org.jflannel.testsupport.cluster;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import org.jflannel.testsupport.cluster.ClusterOptions.Mode;

/**
 * The local multi-node demo (README command 1, run through {@code bin/demo}): starts a
 * {@link NetnsCluster}, prints each node's lease and the pod-to-pod ping matrix, and removes
 * everything again, at once or, with {@code --keep}, on Ctrl-C. Exit code 0 only when every pod
 * reached every other pod.
 */
public final class Demo {
    static final String USAGE = """
            usage: bin/demo [--nodes N] [--mode etcd|kube] [--backend vxlan|udp|host-gw|wireguard|ipip|ipsec] [--dual-stack] [--network-policy] [--keep]
              --nodes N     nodes (network namespaces), default 3, at most %d
              --mode M      lease source: etcd (a real etcd, default) or kube (Kubernetes mock API server)
              --backend B   data plane: vxlan (default), udp, host-gw (routes only: the nodes share one L2)
                            or wireguard (encrypted; userspace WireGuard on flannel-wg)
                            or ipip (IPv4-in-IPv4 on flannel.ipip; needs the kernel's ipip module)
                            or ipsec (ESP between the nodes, keyed by strongSwan's charon; needs the kernel's esp4)
              --dual-stack  IPv4 and IPv6: EnableIPv6 with IPv6Network %s, a ULA underlay beside
                            the IPv4 one, pods with both families, a ping matrix of each (not with udp)
              --network-policy  (with --mode kube) flanneld enforces NetworkPolicy: the pods are published as Pod
                            objects, a sample policy is applied and the matrix printed again
              --keep        keep the cluster up for exploration until Ctrl-C
            """.formatted(ClusterOptions.MAX_NODES, ClusterOptions.DEFAULT_IPV6_NETWORK);

    private final PrintStream out;
    private final long started = System.nanoTime();

    private Demo(PrintStream out) {
        this.out = out;
    }

    public static void main(String[] args) throws Exception {
        PrintStream out = new PrintStream(System.out, true, StandardCharsets.UTF_8);
        ClusterOptions options;
        boolean keep;
        boolean policy;
        try {
            DemoArgs parsed = DemoArgs.parse(List.of(args));
            if (parsed.help()) {
                out.print(USAGE);
                return;
            }
            options = parsed.options();
            keep = parsed.keep();
            policy = parsed.networkPolicy();
            requireBackendSupported(options);
            requireKernelFeature(options);
        } catch (IllegalArgumentException e) {
            System.err.println("demo: " + e.getMessage());
            System.err.print(USAGE);
            System.exit(2);
            return;
        }
        System.exit(new Demo(out).run(options, keep, policy));
    }

    /** The daemon carries only the backends its module depends on; say so instead of failing later. */
    static void requireBackendSupported(ClusterOptions options) {
        if (options.backendType().equals("vxlan")) {
            return;
        }
        Path pom = options.projectRoot().resolve("flanneld/pom.xml");
        try {
            if (Files.readString(pom).contains("<artifactId>backend-" + options.backendType().replace("-", "") + "</artifactId>")) {
                return;
            }
        } catch (java.io.IOException e) {
            throw new IllegalArgumentException("--backend " + options.backendType() + ": cannot read " + pom + ": " + e);
        }
        throw new IllegalArgumentException("--backend " + options.backendType() + ": this flanneld build does not "
                + "include that backend yet (flanneld/pom.xml has no backend-" + options.backendType().replace("-", "") + " dependency); use vxlan");
    }

    /** The kernel must have what the backend needs (ipip: the ipip module); say which feature is missing. */
    static void requireKernelFeature(ClusterOptions options) {
        java.util.Optional<String> missing;
        try {
            missing = KernelFeatures.missingFor(options.backendType());
        } catch (Exception e) {
            throw new IllegalArgumentException("--backend " + options.backendType() + ": cannot ask the kernel: " + e.getMessage(), e);
        }
        missing.ifPresent(m -> {
            throw new IllegalArgumentException(m);
        });
    }

    private int run(ClusterOptions options, boolean keep, boolean policy) throws Exception {
        NetnsCluster cluster;
        try {
            cluster = NetnsCluster.start(options.withProgress(this::progress));
        } catch (Exception e) {
            System.err.println("demo: the cluster did not start: " + e.getMessage());
            return 1;
        }
        try {
            if (options.backendType().equals("ipsec")) {
                // upstream's ipsec backend adds no routes: a node reaches the other pod subnets by its default route,
                // which the XFRM policies divert into the tunnel; the demo's nodes have none of their own
                for (ClusterNode n : cluster.nodes()) {
                    Cmd.run(java.time.Duration.ofSeconds(10), List.of("ip", "-n", n.namespace(), "route", "replace", "default",
                            "via", ClusterNames.fabricIp())).orThrow();
                }
            }
            printLeases(cluster);
            out.println();
            out.println("Pod-to-pod ping matrix (ping -c 1 -W 2 from each pod's namespace):");
            PingMatrix matrix = cluster.pingMatrix();
            out.println(matrix.render());
            boolean ok = matrix.allAnswered();
            List<PingMatrix.Result> failures = new java.util.ArrayList<>(matrix.failures());
            if (cluster.options().dualStack()) {
                out.println();
                out.println("Pod-to-pod ping matrix over IPv6 (ping -6 -c 1 -W 2):");
                PingMatrix m6 = cluster.pingMatrix(Pod.Family.IPV6);
                out.println(m6.render());
                ok &= m6.allAnswered();
                failures.addAll(m6.failures());
            }
            out.println(ok ? "RESULT: every pod reached every other pod" + (cluster.options().dualStack() ? ", over IPv4 and IPv6" : "")
                    : "RESULT: FAILED, no answer for " + failures);
            if (ok && policy) {
                ok = new DemoPolicy(cluster, out).run();
            }
            if (keep) {
                explore(cluster);
                new CountDownLatch(1).await(); // until Ctrl-C; the cluster's shutdown hook cleans up
            }
            return ok ? 0 : 1;
        } finally {
            cluster.close();
        }
    }

    private void printLeases(NetnsCluster cluster) throws java.io.IOException {
        out.println();
        out.println("Leases:");
        out.printf("  %-7s %-12s %-16s %-15s %-6s%n", "node", "netns", "subnet", "publicIp", "mtu");
        for (ClusterNode n : cluster.nodes()) {
            NodeLease l = n.lease();
            out.printf("  %-7s %-12s %-16s %-15s %-6d%n", n.name(), n.namespace(), l.subnet(),
                    l.publicIp().getHostAddress(), l.mtu());
            if (cluster.options().dualStack()) {
                NodeLease l6 = n.ipv6Lease();
                out.printf("  %-7s %-12s %s via %s%n", "", "IPv6", l6.subnet(), ClusterNames.nodeIpv6(n.index()));
            }
        }
    }

    private void explore(NetnsCluster cluster) {
        ClusterNode n1 = cluster.node(1);
        Pod p = cluster.pods().isEmpty() ? null : cluster.pods().get(0);
        out.println();
        out.println("The cluster stays up until Ctrl-C. Explore it (as root):");
        out.println("  ip netns list | grep " + cluster.names().prefix() + "        # this run's namespaces");
        if (cluster.options().backendType().equals("host-gw")) {
            out.println("  ip -n " + n1.namespace() + " route show dev eth0       # a route per peer via its address, on " + n1.name());
        } else if (cluster.options().backendType().equals("ipip")) {
            out.println("  ip -n " + n1.namespace() + " -d link show flannel.ipip; ip -n " + n1.namespace()
                    + " route show dev flannel.ipip   # the tunnel and a route per peer on " + n1.name());
            out.println("  ip netns exec " + n1.namespace() + " tcpdump -ni eth0 ip proto 4   # IPv4-in-IPv4 on the wire");
        } else if (cluster.options().backendType().equals("wireguard")) {
            out.println("  ip -n " + n1.namespace() + " addr show flannel-wg; ip -n " + n1.namespace()
                    + " route   # the TUN of the userspace WireGuard on " + n1.name());
            out.println("  ip netns exec " + n1.namespace() + " tcpdump -ni eth0 udp port 51820   # only ciphertext on the wire");
        } else {
            out.println("  ip -n " + n1.namespace() + " -d link show flannel.1       # the VTEP on " + n1.name());
            out.println("  ip -n " + n1.namespace() + " route; ip -n " + n1.namespace() + " neigh show dev flannel.1");
            out.println("  bridge -n " + n1.namespace() + " fdb show dev flannel.1");
        }
        out.println("  cat " + n1.subnetFile() + "; less " + n1.log());
        out.println("  ip netns exec " + n1.namespace() + " iptables -t nat -S");
        if (p != null) {
            out.println("  ip netns exec " + p.namespace() + " ping " + cluster.pods().get(cluster.pods().size() - 1).ip());
        }
        if (cluster.options().mode() == Mode.ETCD) {
            out.println("  ip netns exec " + cluster.names().fabric() + " etcdctl --endpoints=" + FabricEtcd.endpoint()
                    + " get --prefix /coreos.com/network");
        } else {
            out.println("  kubeconfig: " + cluster.kubeconfig() + " (reachable from inside " + cluster.names().fabric() + " and the nodes)");
        }
        out.println("  run directory: " + cluster.runDir());
    }

    private void progress(String line) {
        out.printf("[%5.1fs] %s%n", (System.nanoTime() - started) / 1e9, line);
    }
}
