package org.jflannel.cni;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The kube-flannel conflist (REFERENCE §10: flannel, then portmap) driven as libcni drives a
 * list: ADD in order with each result passed on as prevResult, DEL in reverse (prevResult from
 * 0.4.0 on). portmap's DNAT rule must appear in the node namespace's nat table and go again.
 */
@Tag("netns")
class KubeFlannelChainIT {

    private static final String NETWORK = "cbr0";

    @TempDir
    Path dir;

    @ParameterizedTest(name = "cniVersion {0}")
    @ValueSource(strings = {"0.3.1", "1.0.0"})
    void chainAddsDnatAndDelRemovesIt(String version) throws Exception {
        String subnetEnv = "FLANNEL_NETWORK=10.244.0.0/16\nFLANNEL_SUBNET=10.244.1.1/24\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n";
        try (CniNode node = new CniNode(dir, subnetEnv); Netns pod = Netns.create("fp")) {
            String id = "ctr" + pod.name;
            String flannelConf = node.config(NETWORK, version, "\"hairpinMode\":true,\"isDefaultGateway\":true");
            Netns.Result flannel = node.flannel("ADD", id, pod, flannelConf);
            assertThat(flannel.exit()).as("flannel ADD: %s %s", flannel.stdout(), flannel.stderr()).isZero();
            assertThat(flannel.stdout()).contains("\"address\": \"10.244.1.2/24\"", "\"cniVersion\": \"" + version + "\"");
            assertThat(pod.exec("ip", "route", "show", "default")).contains("default via 10.244.1.1 dev eth0");

            Netns.Result portmap = node.plugin("portmap", "ADD", id, pod, portmapConf(version, flannel.stdout()));
            assertThat(portmap.exit()).as("portmap ADD: %s %s", portmap.stdout(), portmap.stderr()).isZero();
            assertThat(node.ns.exec("iptables", "-t", "nat", "-S")).contains("--dport 8080 -j DNAT --to-destination 10.244.1.2:80");

            String prev = version.equals("0.3.1") ? null : portmap.stdout(); // libcni: prevResult on DEL from 0.4.0
            Netns.Result portmapDel = node.plugin("portmap", "DEL", id, pod, portmapConf(version, prev));
            assertThat(portmapDel.exit()).as("portmap DEL: %s %s", portmapDel.stdout(), portmapDel.stderr()).isZero();
            Netns.Result flannelDel = node.flannel("DEL", id, pod, prev == null ? flannelConf : withPrevResult(flannelConf, prev));
            assertThat(flannelDel.exit()).as("flannel DEL: %s %s", flannelDel.stdout(), flannelDel.stderr()).isZero();

            assertThat(node.ns.exec("iptables", "-t", "nat", "-S")).doesNotContain("10.244.1.2:80");
            assertThat(node.dataDir.resolve(id)).doesNotExist();
            assertThat(Files.exists(node.ipamDir.resolve(NETWORK).resolve("10.244.1.2"))).isFalse();
            assertThat(pod.exec("ip", "-o", "link")).doesNotContain("eth0");
        }
    }

    /** The portmap entry of the conflist as the runtime hands it over: list name and version, runtimeConfig, prevResult. */
    private static String portmapConf(String version, String prevResult) {
        return "{\"cniVersion\":\"" + version + "\",\"name\":\"" + NETWORK + "\",\"type\":\"portmap\","
            + "\"capabilities\":{\"portMappings\":true},"
            + "\"runtimeConfig\":{\"portMappings\":[{\"hostPort\":8080,\"containerPort\":80,\"protocol\":\"tcp\"}]}"
            + (prevResult == null ? "" : ",\"prevResult\":" + prevResult) + "}";
    }

    private static String withPrevResult(String conf, String prevResult) {
        return conf.substring(0, conf.length() - 1) + ",\"prevResult\":" + prevResult + "}";
    }
}
