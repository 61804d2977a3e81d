package org.jflannel.testsupport.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The container runtime's side of a node, as containerd runs a conflist: reads the first config in
 * the node's {@code /etc/cni/net.d} (what install-cni wrote) and runs each plugin of the list with
 * {@code CNI_PATH=/opt/cni/bin}, the list's {@code cniVersion} and {@code name}, and the previous
 * result. It runs in the node's network namespace and a private mount namespace where the fake
 * host's {@code /opt}, {@code /run} and {@code /var/lib} stand in for the machine's, so
 * {@code /opt/cni/bin/flannel} is the one install-cni-plugin put there and {@code /run/flannel/subnet.env}
 * the one this node's flanneld wrote. Every JDK of this machine is hidden ({@code /usr/lib/jvm} under
 * an empty tmpfs) and the environment is the runtime's own (no {@code JAVA_HOME}, a plain
 * {@code PATH}): the installed plugin must bring its own runtime.
 */
public final class HostSideCni {
    public static final String PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
    private static final Duration PLUGIN_WITHIN = Bounds.scaled(Duration.ofSeconds(60));
    private static final ObjectMapper JSON = new ObjectMapper();

    private final String netns;
    private final FakeHost host;

    public HostSideCni(String netns, FakeHost host) {
        this.netns = netns;
        this.host = host;
    }

    /** The config file the runtime uses: the first {@code *.conf}, {@code *.conflist}, {@code *.json} by name. */
    public Path conflist() throws IOException {
        try (var s = Files.list(host.path("/etc/cni/net.d"))) {
            return s.filter(p -> p.getFileName().toString().matches(".*\\.(conf|conflist|json)$")).sorted().findFirst()
                    .orElseThrow(() -> new IOException("no CNI config in " + host.path("/etc/cni/net.d")));
        }
    }

    /** ADD of the whole list for pod namespace {@code podNs}; returns the last plugin's result. */
    public JsonNode add(String podNs) throws IOException, InterruptedException {
        JsonNode list = JSON.readTree(conflist().toFile());
        JsonNode prev = null;
        for (JsonNode plugin : list.path("plugins")) {
            ObjectNode conf = plugin.deepCopy();
            conf.put("cniVersion", list.path("cniVersion").asText()).put("name", list.path("name").asText());
            if (prev != null) {
                conf.set("prevResult", prev);
            }
            Cmd.Result r = exec(plugin.path("type").asText(), Map.of("CNI_COMMAND", "ADD", "CNI_CONTAINERID", podNs,
                    "CNI_NETNS", "/run/netns/" + podNs, "CNI_IFNAME", "eth0"), conf.toString()).orThrow();
            prev = JSON.readTree(r.stdout());
        }
        return prev;
    }

    /** The first IPv4 address of a CNI result. */
    public static String ipv4(JsonNode result) throws IOException {
        for (JsonNode ip : result.path("ips")) {
            String cidr = ip.path("address").asText("");
            if (cidr.contains(".")) {
                return cidr.substring(0, cidr.indexOf('/'));
            }
        }
        throw new IOException("CNI result has no IPv4 address: " + result);
    }

    /** Runs {@code /opt/cni/bin/<type>} as the runtime does (CNI_PATH and the runtime's env added to {@code cniEnv}). */
    public Cmd.Result exec(String type, Map<String, String> cniEnv, String stdin) throws IOException, InterruptedException {
        List<String> env = new ArrayList<>(List.of("PATH=" + PATH, "CNI_PATH=/opt/cni/bin"));
        cniEnv.forEach((k, v) -> env.add(k + "=" + v));
        return run(env, List.of("/opt/cni/bin/" + type), stdin);
    }

    /** Runs {@code argv} on this node's host side (fake host in place, JDKs hidden) with exactly {@code env}. */
    public Cmd.Result run(List<String> env, List<String> argv, String stdin) throws IOException, InterruptedException {
        StringBuilder s = new StringBuilder("set -eu\n");
        s.append("H=").append(PodRunner.q(host.root().toString())).append('\n');
        s.append("mount --rbind /run/netns \"$H/run/netns\"\n"); // the pods' namespaces stay reachable
        s.append("mount --rbind \"$H/run\" /run\n");
        s.append("mount --rbind \"$H/opt\" /opt\n");
        s.append("mkdir -p \"$H/var/lib\" && mount --rbind \"$H/var/lib\" /var/lib\n");
        s.append("mount -t tmpfs -o size=64k,mode=0755 no-jdk /usr/lib/jvm\n");
        s.append("exec /usr/bin/env -i");
        env.forEach(e -> s.append(' ').append(PodRunner.q(e)));
        argv.forEach(a -> s.append(' ').append(PodRunner.q(a)));
        s.append('\n');
        return Cmd.run(PLUGIN_WITHIN, List.of("ip", "netns", "exec", netns, "unshare", "--mount", "--propagation", "private",
                "--", "/bin/sh", "-c", s.toString()), Map.of(), stdin);
    }

    /** The node's view of {@code path} (for assertions: e.g. the installed plugin). */
    public Path hostFile(String path) {
        return host.path(path);
    }

}
