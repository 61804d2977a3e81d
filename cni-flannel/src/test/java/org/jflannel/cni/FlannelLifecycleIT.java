package org.jflannel.cni;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Upstream's four lifecycle cases (v4, two networks, v6, dual stack) with Debian's real bridge and
 * host-local, the plugin run through bin/flannel inside a node namespace: ADD gives the pod .2 and
 * the routes, the scratch file holds the delegate bytes, DEL removes everything, a second DEL
 * succeeds.
 */
@Tag("netns")
class FlannelLifecycleIT {

    @TempDir
    Path dir;

    static Stream<Arguments> cases() {
        String tail = "FLANNEL_MTU=1472\nFLANNEL_IPMASQ=true\n";
        return Stream.of(
            Arguments.of("v4", "FLANNEL_NETWORK=10.1.0.0/16\nFLANNEL_SUBNET=10.1.17.1/24\n" + tail,
                "[[{\"subnet\":\"10.1.17.0/24\"}]]", "[{\"dst\":\"10.1.0.0/16\"}]",
                new String[] {"10.1.17.2/24"}, new String[] {"10.1.0.0/16 via 10.1.17.1 dev eth0"}),
            Arguments.of("two networks", "FLANNEL_NETWORK=10.1.0.0/16,192.168.0.0/16\nFLANNEL_SUBNET=10.1.17.1/24\n" + tail,
                "[[{\"subnet\":\"10.1.17.0/24\"}]]", "[{\"dst\":\"10.1.0.0/16\"},{\"dst\":\"192.168.0.0/16\"}]",
                new String[] {"10.1.17.2/24"},
                new String[] {"10.1.0.0/16 via 10.1.17.1 dev eth0", "192.168.0.0/16 via 10.1.17.1 dev eth0"}),
            Arguments.of("v6", "FLANNEL_IPV6_NETWORK=fc00::/48\nFLANNEL_IPV6_SUBNET=fc00::1/64\n" + tail,
                "[[{\"subnet\":\"fc00::/64\"}]]", "[{\"dst\":\"fc00::/48\"}]",
                new String[] {"fc00::2/64"}, new String[] {"fc00::/48 via fc00::1 dev eth0"}),
            Arguments.of("dual stack", "FLANNEL_NETWORK=10.1.0.0/16\nFLANNEL_SUBNET=10.1.17.1/24\nFLANNEL_IPV6_NETWORK=fc00::/48\n"
                    + "FLANNEL_IPV6_SUBNET=fc00::1/64\n" + tail,
                "[[{\"subnet\":\"10.1.17.0/24\"}],[{\"subnet\":\"fc00::/64\"}]]", "[{\"dst\":\"10.1.0.0/16\"},{\"dst\":\"fc00::/48\"}]",
                new String[] {"10.1.17.2/24", "fc00::2/64"},
                new String[] {"10.1.0.0/16 via 10.1.17.1 dev eth0", "fc00::/48 via fc00::1 dev eth0"}));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void addGivesPodDot2AndRoutesDelRemovesAllSecondDelSucceeds(String label, String subnetEnv, String ranges, String routes,
                                                                String[] addresses, String[] podRoutes) throws Exception {
        try (CniNode node = new CniNode(dir, subnetEnv); Netns pod = Netns.create("fp")) {
            String id = "ctr" + pod.name;
            String conf = node.config("cni-flannel", "1.0.0", "");
            Netns.Result add = node.flannel("ADD", id, pod, conf);
            assertThat(add.exit()).as("ADD: %s %s", add.stdout(), add.stderr()).isZero();
            for (String a : addresses) {
                assertThat(add.stdout()).contains("\"address\": \"" + a + "\"");
            }

            String podAddrs = pod.exec("ip", "-o", "addr", "show", "dev", "eth0");
            String podRouting = pod.exec("ip", "-4", "route") + pod.exec("ip", "-6", "route");
            for (String a : addresses) {
                assertThat(podAddrs).contains(a);
            }
            for (String r : podRoutes) {
                assertThat(podRouting).contains(r);
            }
            assertThat(node.ns.exec("ip", "-o", "link", "show", "dev", node.bridge)).contains("mtu 1472");

            String expected = "{\"bridge\":\"" + node.bridge + "\",\"cniVersion\":\"1.0.0\",\"ipMasq\":false,\"ipam\":{\"dataDir\":\""
                + node.ipamDir + "\",\"ranges\":" + ranges + ",\"routes\":" + routes + ",\"type\":\"host-local\"},\"isGateway\":true,"
                + "\"mtu\":1472,\"name\":\"cni-flannel\",\"type\":\"bridge\"}";
            assertThat(Files.readString(node.dataDir.resolve(id))).isEqualTo(expected);

            Netns.Result del = node.flannel("DEL", id, pod, conf);
            assertThat(del.exit()).as("DEL: %s %s", del.stdout(), del.stderr()).isZero();
            assertThat(node.dataDir.resolve(id)).doesNotExist();
            assertThat(pod.exec("ip", "-o", "link")).doesNotContain("eth0");
            try (var reserved = Files.list(node.ipamDir.resolve("cni-flannel"))) {
                assertThat(reserved.map(p -> p.getFileName().toString())).noneMatch(f -> f.startsWith("10.") || f.startsWith("fc00"));
            }

            Netns.Result again = node.flannel("DEL", id, null, conf);
            assertThat(again.exit()).as("second DEL: %s", again.stdout()).isZero();
        }
    }

    @Test
    void duplicateAddFailsWithBridgesMessageAndIsRolledBack() throws Exception {
        try (CniNode node = new CniNode(dir, "FLANNEL_NETWORK=10.1.0.0/16\nFLANNEL_SUBNET=10.1.17.1/24\nFLANNEL_MTU=1472\nFLANNEL_IPMASQ=true\n");
             Netns pod = Netns.create("fp")) {
            String id = "ctr" + pod.name;
            String conf = node.config("cni-flannel", "0.3.1", "");
            assertThat(node.flannel("ADD", id, pod, conf).exit()).isZero();
            Netns.Result dup = node.flannel("ADD", id, pod, conf);
            assertThat(dup.exit()).isEqualTo(1);
            assertThat(dup.stdout()).contains("\"msg\": \"container veth name provided (eth0) already exists\"");
            // Ours: a failed delegate ADD is followed by the delegate DEL, as the spec asks of runtimes
            assertThat(node.dataDir.resolve(id)).doesNotExist();
            assertThat(node.flannel("DEL", id, pod, conf).exit()).isZero();
        }
    }
}
