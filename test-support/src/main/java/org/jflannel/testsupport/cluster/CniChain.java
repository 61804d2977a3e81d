package org.jflannel.testsupport.cluster;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

/**
 * Attaches a pod namespace the way a container runtime does with kube-flannel's
 * {@code 10-flannel.conflist}: our {@code flannel} plugin (which delegates to Debian's {@code bridge}
 * and {@code host-local}), then {@code portmap} with the previous result, each run inside the node's
 * namespace. All plugin state (flannel's scratch files, host-local's allocations) lives in the
 * node's run directory, never in the machine's {@code /var/lib/cni}.
 */
final class CniChain {
    static final String CNI_PATH = System.getProperty("jflannel.cni.path", "/usr/lib/cni");
    static final String NETWORK_NAME = "cbr0";
    private static final String CNI_VERSION = "0.3.1";
    private static final Duration PLUGIN_WITHIN = Bounds.scaled(Duration.ofSeconds(60));
    private static final ObjectMapper JSON = new ObjectMapper();

    private final Path flannelLauncher;

    CniChain(Path flannelLauncher) {
        this.flannelLauncher = flannelLauncher;
    }

    /** The flannel entry of the conflist, pointed at this node's subnet.env and run directory. */
    static String flannelConfig(ClusterNode node) {
        ObjectNode conf = JSON.createObjectNode();
        conf.put("cniVersion", CNI_VERSION).put("name", NETWORK_NAME).put("type", "flannel");
        conf.putObject("delegate").put("hairpinMode", true).put("isDefaultGateway", true);
        conf.put("subnetFile", node.subnetFile().toString());
        conf.put("dataDir", node.dir().resolve("flannel").toString());
        conf.putObject("ipam").put("dataDir", node.dir().resolve("ipam").toString());
        return conf.toString();
    }

    /** CNI ADD of the whole chain for pod namespace {@code podNs} on {@code node}; returns the pod's IPv4 address. */
    String add(ClusterNode node, String podNs) throws IOException, InterruptedException {
        return addDual(node, podNs, false).ipv4();
    }

    /**
     * CNI ADD of the whole chain; returns the pod's addresses. {@code ipv6}: the result must carry an
     * IPv6 address too (our plugin hands host-local both ranges from subnet.env), else this fails.
     */
    ClusterRun.Addresses addDual(ClusterNode node, String podNs, boolean ipv6) throws IOException, InterruptedException {
        Map<String, String> env = env("ADD", podNs);
        Cmd.Result flannel = Cmd.run(PLUGIN_WITHIN, inNode(node, flannelLauncher.toString()), env,
                flannelConfig(node)).orThrow();
        JsonNode result = JSON.readTree(flannel.stdout());
        ObjectNode portmap = JSON.createObjectNode();
        portmap.put("cniVersion", CNI_VERSION).put("name", NETWORK_NAME).put("type", "portmap");
        portmap.putObject("capabilities").put("portMappings", true);
        portmap.set("prevResult", result);
        Cmd.run(PLUGIN_WITHIN, inNode(node, Path.of(CNI_PATH, "portmap").toString()), env, portmap.toString())
                .orThrow();
        return new ClusterRun.Addresses(address(result, podNs, false), ipv6 ? address(result, podNs, true) : null);
    }

    private static String address(JsonNode result, String podNs, boolean v6) throws IOException {
        for (JsonNode ip : result.path("ips")) {
            String cidr = ip.path("address").asText("");
            if (cidr.contains("/") && (v6 ? cidr.contains(":") : cidr.contains("."))) {
                return cidr.substring(0, cidr.indexOf('/'));
            }
        }
        throw new IOException("CNI result for " + podNs + " has no " + (v6 ? "IPv6" : "IPv4") + " address: " + result);
    }

    private static Map<String, String> env(String command, String podNs) {
        return Map.of("CNI_COMMAND", command, "CNI_CONTAINERID", podNs, "CNI_NETNS", "/run/netns/" + podNs,
                "CNI_IFNAME", "eth0", "CNI_PATH", CNI_PATH);
    }

    private static List<String> inNode(ClusterNode node, String binary) {
        return List.of("ip", "netns", "exec", node.namespace(), binary);
    }
}
