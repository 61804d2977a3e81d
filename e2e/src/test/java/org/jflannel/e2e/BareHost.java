package org.jflannel.e2e;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.jflannel.testsupport.cluster.Cmd;
import org.jflannel.testsupport.cluster.FakeHost;

/**
 * A node's host side with nothing but CNI on it, as a Talos or Bottlerocket host looks to a plugin: a
 * root directory holding only {@code /opt/cni/bin}, {@code /etc/cni/net.d}, {@code /run/flannel}
 * and {@code /var/lib/cni} (the node's own, bound from its {@link FakeHost}, so addresses and scratch
 * files are shared with the node's other pods), {@code /proc}, {@code /sys}, {@code /dev} and
 * {@code /tmp}: no {@code /bin/sh}, no libc, no {@code /usr}. Commands run in the node's network
 * namespace and a private mount namespace (nothing is mounted on this machine), chrooted into it:
 * a static binary directly ({@link #chrooted}), upstream's dynamically linked cnitool through this
 * machine's loader with a preloaded library that enters the root before cnitool's main
 * ({@link #cnitool}; {@code chroot-preload.c}).
 */
final class BareHost {
    /** Everything the root holds. */
    static final List<String> TOP_LEVEL = List.of("dev", "etc", "opt", "proc", "run", "sys", "tmp", "var");
    private static final Duration WITHIN = Duration.ofSeconds(90);
    private static final String POD_NETNS = "/tmp/netns-pod";

    final Path root;
    private final String nodeNs;
    private final FakeHost node;
    private final Path preload;
    private final Path cnitool;

    private BareHost(Path root, String nodeNs, FakeHost node, Path preload, Path cnitool) {
        this.root = root;
        this.nodeNs = nodeNs;
        this.node = node;
        this.preload = preload;
        this.cnitool = cnitool;
    }

    /**
     * The root at {@code root}: {@code plugins} (files or directories, copied as they are) and the static
     * delegate plugins in {@code /opt/cni/bin}, {@code conflist} as {@code /etc/cni/net.d/10-flannel.conflist}.
     */
    static BareHost create(Path root, String nodeNs, FakeHost node, List<Path> plugins, Path staticPlugins, String conflist,
                           Path preload, Path cnitool) throws IOException, InterruptedException {
        for (String d : List.of("opt/cni/bin", "etc/cni/net.d", "run/flannel", "var/lib/cni", "proc", "sys", "dev", "tmp")) {
            Files.createDirectories(root.resolve(d));
        }
        Files.createDirectories(node.path("/var/lib/cni"));
        Files.createDirectories(node.path("/run/flannel"));
        List<String> cp = new ArrayList<>(List.of("cp", "-a"));
        plugins.forEach(p -> cp.add(p.toString()));
        try (var s = Files.list(staticPlugins)) {
            s.forEach(p -> cp.add(p.toString()));
        }
        cp.add(root.resolve("opt/cni/bin").toString());
        Cmd.run(WITHIN, cp).orThrow();
        Files.writeString(root.resolve("etc/cni/net.d/10-flannel.conflist"), conflist, StandardCharsets.UTF_8);
        return new BareHost(root, nodeNs, node, preload, cnitool);
    }

    /** {@code cnitool OP cbr0 <podNs>} with NETCONFPATH and CNI_PATH the root's own. */
    Cmd.Result cnitool(String op, String podNs) throws IOException, InterruptedException {
        Map<String, String> env = new TreeMap<>(Map.of("JFLANNEL_CHROOT", root.toString(), "NETCONFPATH", "/etc/cni/net.d",
                "CNI_PATH", "/opt/cni/bin"));
        return run(podNs, env, List.of("/lib64/ld-linux-x86-64.so.2", "--preload", preload.toString(), cnitool.toString(), op,
                "cbr0", POD_NETNS), null);
    }

    /** {@code argv} (a path inside the root, a static binary) run chrooted with exactly {@code env}. */
    Cmd.Result chrooted(Map<String, String> env, List<String> argv, String stdin) throws IOException, InterruptedException {
        List<String> all = new ArrayList<>(List.of("/usr/sbin/chroot", root.toString()));
        all.addAll(argv);
        return run(null, env, all, stdin);
    }

    private Cmd.Result run(String podNs, Map<String, String> env, List<String> argv, String stdin)
            throws IOException, InterruptedException {
        StringBuilder s = new StringBuilder("set -eu\nC=").append(q(root.toString())).append('\n')
                .append("mount -t proc proc \"$C/proc\"\nmount -t sysfs sysfs \"$C/sys\"\nmount --rbind /dev \"$C/dev\"\n")
                .append("mount --bind ").append(q(node.path("/run/flannel").toString())).append(" \"$C/run/flannel\"\n")
                .append("mount --bind ").append(q(node.path("/var/lib/cni").toString())).append(" \"$C/var/lib/cni\"\n");
        if (podNs != null) {
            s.append("touch \"$C").append(POD_NETNS).append("\"\nmount --bind ").append(q("/run/netns/" + podNs))
                    .append(" \"$C").append(POD_NETNS).append("\"\n");
        }
        s.append("exec /usr/bin/env -i");
        env.forEach((k, v) -> s.append(' ').append(q(k + "=" + v)));
        argv.forEach(a -> s.append(' ').append(q(a)));
        s.append('\n');
        return Cmd.run(WITHIN, List.of("ip", "netns", "exec", nodeNs, "unshare", "--mount", "--propagation", "private", "--",
                "/bin/sh", "-c", s.toString()), Map.of(), stdin);
    }

    private static String q(String s) {
        return "'" + s.replace("'", "'\\''") + "'";
    }
}
