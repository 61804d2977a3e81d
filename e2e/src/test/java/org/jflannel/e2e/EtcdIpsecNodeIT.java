package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jflannel.testsupport.cluster.ClusterNode;
import org.jflannel.testsupport.cluster.ClusterOptions;
import org.jflannel.testsupport.cluster.ClusterPerClass;
import org.jflannel.testsupport.cluster.Cmd;
import org.jflannel.testsupport.cluster.NetnsCluster;
import org.jflannel.testsupport.cluster.NodeLease;
import org.jflannel.testsupport.cluster.Wait;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Our daemon on the ipsec backend, one node of an etcd cluster on this host (no ESP in this kernel, so no
 * data path: that is {@code EtcdIpsecVmIT} and {@code backend-ipsec}'s {@code IpsecVmIT}). What it shows: the
 * daemon starts charon (the harness gives each node's charon its directory as /run:
 * {@code JFLANNEL_IPSEC_PRIVATE_RUN=1}, {@code JFLANNEL_IPSEC_DIR}), publishes an ipsec
 * lease, writes FLANNEL_MTU = 1500 − 77; a peer lease put into etcd brings its three XFRM policies and its
 * IKE connection (Debian's swanctl and ip as witnesses), its removal takes them away; SIGTERM ends charon.
 */
@Tag("e2e")
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class EtcdIpsecNodeIT {
    static final String PSK = "e2e-psk-".repeat(12);
    static final String BACKEND = "{\"Type\":\"ipsec\",\"PSK\":\"" + PSK + "\"}";
    static final String PEER_SUBNET = "10.244.250.0/24";
    static final String PEER_IP = "192.0.2.250";

    @RegisterExtension
    static final ClusterPerClass CLUSTER = ClusterPerClass.of(ClusterOptions.defaults().withNodes(1).withPodsPerNode(1)
            .withBackend(BACKEND));
    private final NetnsCluster cluster;

    EtcdIpsecNodeIT(NetnsCluster cluster) {
        this.cluster = cluster;
    }

    @Test
    @Order(1)
    void theDaemonRegistersIpsecWithUpstreamsLeaseAndMtu() throws Exception {
        ClusterNode n = cluster.node(1);
        NodeLease l = n.lease();
        assertThat(l.mtu()).as("FLANNEL_MTU: the interface's 1500 - 77").isEqualTo(1423);
        assertThat(cluster.etcdGet(NetnsCluster.leaseKey(l))).contains("\"BackendType\":\"ipsec\"")
                .contains("\"PublicIP\":\"" + l.publicIp().getHostAddress() + "\"");
        assertThat(n.logSinceStart()).contains("ipsec network registered").doesNotContain(PSK);
        assertThat(swanctl("--version")).contains("strongSwan swanctl");
        assertThat(Files.exists(Path.of("/run/charon.pid"))).as("charon's pidfile in the node's directory, not the host's /run").isFalse();
        assertThat(Files.exists(cluster.runDir().resolve("node1/ipsec/charon.pid"))).isTrue();
    }

    @Test
    @Order(2)
    void aPeerLeaseBringsItsPoliciesAndConnectionAndItsRemovalTakesThemAway() throws Exception {
        ClusterNode n = cluster.node(1);
        NodeLease l = n.lease();
        String conn = l.publicIp().getHostAddress() + "-" + l.subnet() + "-" + PEER_SUBNET + "-" + PEER_IP;
        String key = "/coreos.com/network/subnets/" + PEER_SUBNET.replace('/', '-');
        cluster.etcdPut(key, "{\"PublicIP\":\"" + PEER_IP + "\",\"BackendType\":\"ipsec\"}");
        Wait.until("the peer's policies on " + n.name(), Duration.ofSeconds(60),
                () -> policies(n).size() == 3);
        assertThat(String.join("\n", policies(n))).contains("dir out", "dir in", "dir fwd",
                "tmpl src " + l.publicIp().getHostAddress() + " dst " + PEER_IP, "tmpl src " + PEER_IP + " dst " + l.publicIp().getHostAddress());
        Wait.until("the connection in charon", Duration.ofSeconds(60), () -> swanctl("--list-conns").contains(conn + ":"));

        assertThat(cluster.etcdDelete(key)).isEqualTo(1);
        Wait.until("the peer's policies gone", Duration.ofSeconds(60), () -> policies(n).isEmpty());
        Wait.until("the connection gone", Duration.ofSeconds(60), () -> !swanctl("--list-conns").contains(conn));
    }

    @Test
    @Order(3)
    void sigtermEndsCharon() throws Exception {
        ClusterNode n = cluster.node(1);
        Matcher m = Pattern.compile("charon started pid=(\\d+)").matcher(n.logSinceStart());
        assertThat(m.find()).as("the daemon logged charon's pid").isTrue();
        long pid = Long.parseLong(m.group(1));
        assertThat(ProcessHandle.of(pid).filter(ProcessHandle::isAlive)).isPresent();
        n.stop();
        assertThat(ProcessHandle.of(pid).filter(ProcessHandle::isAlive)).as("charon ended with the daemon").isEmpty();
        assertThat(n.logSinceStart()).contains("charon stopped pid=" + pid);
    }

    /** The node's XFRM policy blocks with a template (charon's per-socket bypass policies have none). */
    private static List<String> policies(ClusterNode n) throws Exception {
        String text = Cmd.run(Duration.ofSeconds(30), List.of("ip", "-n", n.namespace(), "xfrm", "policy", "list")).stdout();
        return java.util.Arrays.stream(text.split("(?m)^(?=src )")).filter(b -> b.contains("tmpl ")).toList();
    }

    private String swanctl(String what) throws Exception {
        Path vici = cluster.runDir().resolve(cluster.node(1).name()).resolve("ipsec/charon.vici");
        return Cmd.run(Duration.ofSeconds(30), List.of("swanctl", what, "--uri", "unix://" + vici)).stdout();
    }
}
