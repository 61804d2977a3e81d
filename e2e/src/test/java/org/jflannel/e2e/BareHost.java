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
 * a static binary directly ({@link #chrooted}), or the static {@code libcni-driver} (Debian's libcni,
 * {@code tools/libcni-driver}) from outside the root, which it enters itself with {@code --root} before
 * libcni reads anything ({@link #libcni}).
 */
final class BareHost {
    /** Everything the root holds. */
    static final List<String> TOP_LEVEL = List.of("dev", "etc", "opt", "proc", "run", "sys", "tmp", "var");
    private static final Duration WITHIN = Duration.ofSeconds(90);
    private static final String POD_NETNS = "/tmp/netns-pod";

    final Path root;
    private final String nodeNs;
    private final FakeHost node;
    private final Path driver;
    /** Added to the driver's environment, which libcni passes on to the plugins (JFLANNEL_CNI_FAST=0). */
    private final Map<String, String> pluginEnv = new TreeMap<>();

    private BareHost(Path root, String nodeNs, FakeHost node, Path driver) {
        this.root = root;
        this.nodeNs = nodeNs;
        this.node = node;
        this.driver = driver;
    }

    /**
     * The root at {@code root}: {@code plugins} (files or directories, copied as they are) and the static
     * delegate plugins in {@code /opt/cni/bin}, {@code conflist} as {@code /etc/cni/net.d/10-flannel.conflist};
     * {@code driver} is the static libcni-driver, on this machine (outside the root).
     */
    static BareHost create(Path root, String nodeNs, FakeHost node, List<Path> plugins, Path staticPlugins, String conflist,
                           Path driver) throws IOException, InterruptedException {
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
        return new BareHost(root, nodeNs, node, driver);
    }

    /** {@code libcni-driver --root <root> OP cbr0 <podNs>} (add, check, del) with NETCONFPATH and CNI_PATH the root's own. */
    Cmd.Result libcni(String op, String podNs) throws IOException, InterruptedException {
        return run(podNs, driverEnv("/etc/cni/net.d"), driverArgv(List.of(op, "cbr0", POD_NETNS)), null);
    }

    /**
     * {@code libcni-driver --root <root> ARGS...} with no pod (gc, status), CNI_PATH the root's {@code /opt/cni/bin}
     * and NETCONFPATH {@code netconfDir}, a directory in the root (see {@link #writeNetconf}).
     */
    Cmd.Result libcni(String netconfDir, List<String> args) throws IOException, InterruptedException {
        return run(null, driverEnv(netconfDir), driverArgv(args), null);
    }

    /** {@code conflist} as {@code <dir>/<file>} in the root ({@code dir} a path in the root); returns {@code dir}. */
    String writeNetconf(String dir, String file, String conflist) throws IOException {
        Path d = root.resolve(dir.substring(1));
        Files.createDirectories(d);
        Files.writeString(d.resolve(file), conflist, StandardCharsets.UTF_8);
        return dir;
    }

    private Map<String, String> driverEnv(String netconfDir) {
        Map<String, String> env = new TreeMap<>(pluginEnv);
        env.putAll(Map.of("NETCONFPATH", netconfDir, "CNI_PATH", "/opt/cni/bin"));
        return env;
    }

    /** The plugin's fast path off (issue 37): every call runs the plugin's own JVM even while flanneld serves the node. */
    BareHost withoutFastPath() {
        pluginEnv.put("JFLANNEL_CNI_FAST", "0");
        return this;
    }

    private List<String> driverArgv(List<String> args) {
        List<String> argv = new ArrayList<>(List.of(driver.toString(), "--root", root.toString()));
        argv.addAll(args);
        return argv;
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
