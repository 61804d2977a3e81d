package org.jflannel.testsupport.cluster;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;

/**
 * The parts of a Kubernetes node's file system that kube-flannel's pod and the container runtime
 * share, kept in a directory per node: {@code /opt/cni/bin} (holding Debian's {@code bridge},
 * {@code host-local}, {@code portmap} and {@code loopback}, as a node's CNI package would),
 * {@code /etc/cni/net.d}, {@code /run/flannel}, {@code /var/lib/cni}. hostPath volumes resolve here;
 * {@link HostSideCni} runs the runtime's side with these directories in place of the machine's.
 */
public final class FakeHost {
    /** The plugins a node ships besides flannel (containernetworking-plugins). */
    static final List<String> NODE_PLUGINS = List.of("bridge", "host-local", "portmap", "loopback");

    private final Path root;

    private FakeHost(Path root) {
        this.root = root;
    }

    /** Lays out a fresh fake host under {@code root}, the node's plugins copied from {@link CniChain#CNI_PATH}. */
    public static FakeHost create(Path root) throws IOException {
        for (String dir : List.of("opt/cni/bin", "etc/cni/net.d", "run/flannel", "run/netns", "var/lib/cni")) {
            Files.createDirectories(root.resolve(dir));
        }
        for (String plugin : NODE_PLUGINS) {
            Path from = Path.of(CniChain.CNI_PATH, plugin);
            Files.copy(from, root.resolve("opt/cni/bin").resolve(plugin), StandardCopyOption.COPY_ATTRIBUTES);
        }
        return new FakeHost(root.toAbsolutePath());
    }

    public Path root() {
        return root;
    }

    /** Where the node's absolute {@code hostPath} lies in this fake host. */
    public Path path(String hostPath) {
        return root.resolve(hostPath.replaceFirst("^/+", ""));
    }
}
