package org.jflannel.flanneld.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.HttpURLConnection;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.jflannel.flanneld.testing.Await;
import org.jflannel.flanneld.testing.DaemonProcess;
import org.jflannel.flanneld.testing.NsEtcd;
import org.jflannel.flanneld.testing.ThrowawayNs;
import org.jflannel.testbase.DatagramWitness;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The whole daemon as a process inside a throwaway namespace with a real etcd there: start-up
 * order, subnet.env, sd_notify READY=1, /readyz, iptables rules, a peer lease programmed and
 * removed, SIGTERM → exit 0.
 */
@Tag("netns")
@Tag("etcd")
class DaemonEtcdIT {
    static final Duration WAIT = Duration.ofSeconds(60);
    static final String PEER_KEY = "/coreos.com/network/subnets/10.244.99.0-24";

    @Test
    void startsProgramsPeersAndStopsCleanly(@TempDir Path dir) throws Exception {
        try (ThrowawayNs ns = ThrowawayNs.node("fdd")) {
            try (NsEtcd etcd = NsEtcd.start(ns)) {
                etcd.put("/coreos.com/network/config", "{\"Network\": \"10.244.0.0/16\", \"Backend\": {\"Type\": \"vxlan\"}}");
                etcd.put(PEER_KEY, "{\"PublicIP\":\"192.0.2.99\",\"PublicIPv6\":null,\"BackendType\":\"vxlan\","
                        + "\"BackendData\":{\"VNI\":1,\"VtepMAC\":\"0e:00:00:00:00:99\"}}");
                Path subnetFile = dir.resolve("run/subnet.env");
                Path notifySocket = dir.resolve("notify.sock");
                try (DatagramWitness systemd = DatagramWitness.bind(notifySocket.toString(), subnetFile, 90);
                        DaemonProcess d = DaemonProcess.start(ns.execPrefix(), Map.of("NOTIFY_SOCKET", notifySocket.toString()),
                        "--etcd-endpoints=" + NsEtcd.ENDPOINT, "--subnet-file=" + subnetFile, "--ip-masq",
                        "--healthz-ip=127.0.0.1", "--healthz-port=10256", "--iptables-resync=1", "--ip-blackhole-route")) {
                    assertThat(d.awaitStderr(s -> s.contains("lease snapshot programmed"), WAIT)).as(d.stderr()).isTrue();
                    // §9.5 steps 12-14: READY=1, exactly, once subnet.env exists
                    assertThat(systemd.first()).isEqualTo(new DatagramWitness.Datagram("READY=1", true));
                    // logged after the datagram left: the witness may have it before the line is written
                    assertThat(d.awaitStderr(s -> s.contains("sd_notify READY=1 sent socket=" + notifySocket), WAIT))
                            .as(d.stderr()).isTrue();
                    String env = Files.readString(subnetFile);
                    assertThat(env).startsWith("FLANNEL_NETWORK=10.244.0.0/16\nFLANNEL_SUBNET=10.244.")
                            .endsWith("/24\nFLANNEL_MTU=1450\nFLANNEL_IPMASQ=true\n");
                    assertThat(get(ns, "/readyz")).isEqualTo("200 flanneld is ready");
                    assertThat(get(ns, "/healthz")).isEqualTo("200 flanneld is running");

                    assertThat(ns.exec("ip", "-d", "link", "show", "flannel.1")).contains("vxlan id 1", "local 192.0.2.10",
                            "dev ext0");
                    // through a nexthop object by default (ours, issue 23): the id is the gateway as a number
                    assertThat(ns.exec("ip", "route", "show", "10.244.99.0/24"))
                            .contains("10.244.99.0/24 nhid 183788288 via 10.244.99.0 dev flannel.1 onlink");
                    assertThat(ns.exec("iptables", "-t", "nat", "-S")).contains("-A POSTROUTING -m comment --comment \"flanneld masq\" -j FLANNEL-POSTRTG");
                    assertThat(ns.exec("iptables", "-t", "filter", "-S")).contains("-A FLANNEL-FWD -s 10.244.0.0/16");
                    assertThat(get(ns, "/metrics")).contains("flanneld_leases 1.0");

                    // --ip-blackhole-route: the own subnet, one resync period after start-up
                    String own = env.lines().filter(l -> l.startsWith("FLANNEL_SUBNET=")).findFirst().orElseThrow()
                            .replaceAll("FLANNEL_SUBNET=(\\d+\\.\\d+\\.\\d+)\\.1/24", "$1.0/24");
                    assertThat(Await.until(() -> ns.exec("ip", "route", "show", "type", "blackhole").contains(own),
                            Duration.ofSeconds(15))).isTrue();
                    // a forward rule deleted by hand comes back within a few resync periods
                    ns.exec("iptables", "-D", "FLANNEL-FWD", "-d", "10.244.0.0/16", "-m", "comment", "--comment",
                            "flanneld forward", "-j", "ACCEPT");
                    assertThat(Await.until(() -> ns.exec("iptables", "-S", "FLANNEL-FWD").contains("-d 10.244.0.0/16"),
                            Duration.ofSeconds(15))).isTrue();

                    etcd.delete(PEER_KEY);
                    assertThat(Await.until(() -> ns.exec("ip", "route", "show", "10.244.99.0/24").isBlank(), Duration.ofSeconds(15)))
                            .isTrue();

                    d.terminate();
                    assertThat(d.waitFor(WAIT)).isZero();
                    assertThat(d.stderr()).contains("Exiting cleanly...");
                    assertThat(Files.readString(subnetFile)).isEqualTo(env); // left in place (§9.4)
                }
            }
        }
    }

    @Test
    void deletingTheOwnLeaseStopsTheDaemonWithExit0(@TempDir Path dir) throws Exception {
        try (ThrowawayNs ns = ThrowawayNs.node("fdr")) {
            try (NsEtcd etcd = NsEtcd.start(ns)) {
                etcd.put("/coreos.com/network/config", "{\"Network\": \"10.244.0.0/16\", \"Backend\": {\"Type\": \"vxlan\"}}");
                Path subnetFile = dir.resolve("subnet.env");
                try (DaemonProcess d = DaemonProcess.start(ns.execPrefix(), Map.of(), "--etcd-endpoints=" + NsEtcd.ENDPOINT,
                        "--subnet-file=" + subnetFile)) {
                    assertThat(d.awaitStderr(s -> s.contains("lease snapshot programmed"), WAIT)).as("%s", d.stderr()).isTrue();
                    String own = Files.readAllLines(subnetFile).stream().filter(l -> l.startsWith("FLANNEL_SUBNET="))
                            .findFirst().orElseThrow().replaceAll("FLANNEL_SUBNET=(\\d+\\.\\d+\\.\\d+)\\.1/(\\d+)", "$1.0-$2");
                    etcd.delete("/coreos.com/network/subnets/" + own);
                    assertThat(d.waitFor(WAIT)).isZero();
                    assertThat(d.stderr()).contains("Lease has been revoked. Shutting down daemon.", "Exiting cleanly...");
                    assertThat(d.stderr()).doesNotContain("sd_notify"); // NOTIFY_SOCKET unset: nothing sent, nothing logged
                }
            }
        }
    }

    /** HTTP inside the namespace: a plain connection opened on the namespace's thread. */
    private static String get(ThrowawayNs ns, String path) throws Exception {
        return ns.netns().call(() -> {
            HttpURLConnection c = (HttpURLConnection) new URL("http://127.0.0.1:10256" + path).openConnection();
            c.setConnectTimeout(5000);
            c.setReadTimeout(5000);
            int code = c.getResponseCode();
            byte[] body = (code < 400 ? c.getInputStream() : c.getErrorStream()).readAllBytes();
            return code + " " + new String(body, StandardCharsets.UTF_8);
        });
    }
}
