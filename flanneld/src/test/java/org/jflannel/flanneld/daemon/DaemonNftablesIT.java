package org.jflannel.flanneld.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.jflannel.flanneld.testing.DaemonProcess;
import org.jflannel.flanneld.testing.NsEtcd;
import org.jflannel.flanneld.testing.ThrowawayNs;
import org.jflannel.testsupport.nft.NftJson;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code EnableNFTables} with the whole daemon as a process in a throwaway namespace (REFERENCE
 * §8.4, §8.5): the tables and rules, the cleanup of the other implementation in both directions,
 * and the fatal failures (exit 1).
 */
@Tag("netns")
@Tag("etcd")
class DaemonNftablesIT {
    static final Duration WAIT = Duration.ofSeconds(60);
    static final String CONFIG = "/coreos.com/network/config";
    static final String NFT_CONF = "{\"Network\": \"10.244.0.0/16\", \"EnableNFTables\": true, \"Backend\": {\"Type\": \"vxlan\"}}";
    static final String IPT_CONF = "{\"Network\": \"10.244.0.0/16\", \"Backend\": {\"Type\": \"vxlan\"}}";

    @Test
    void nftablesModeReplacesIptablesRulesAndIptablesModeReplacesTheTables(@TempDir Path dir) throws Exception {
        try (ThrowawayNs ns = ThrowawayNs.node("fdnd"); NsEtcd etcd = NsEtcd.start(ns)) {
            // leftovers of an iptables-mode run
            ns.exec("iptables", "-t", "nat", "-N", "FLANNEL-POSTRTG");
            ns.exec("iptables", "-t", "nat", "-A", "POSTROUTING", "-m", "comment", "--comment", "flanneld masq", "-j", "FLANNEL-POSTRTG");
            ns.exec("iptables", "-t", "filter", "-N", "FLANNEL-FWD");
            ns.exec("iptables", "-t", "filter", "-A", "FORWARD", "-m", "comment", "--comment", "flanneld forward", "-j", "FLANNEL-FWD");
            etcd.put(CONFIG, NFT_CONF);
            Path subnetFile = dir.resolve("subnet.env");
            String pod = runUntilReadyAndStop(ns, subnetFile, Map.of(), "Starting flannel in nftables mode");

            NftJson v4 = NftJson.parse(ns.exec("nft", "-j", "list", "table", "ip", "flannel-ipv4"));
            assertThat(v4.chain("postrtg")).isEqualTo(new NftJson.Chain("postrtg", "nat", "postrouting", 100, "accept"));
            assertThat(v4.chain("forward")).isEqualTo(new NftJson.Chain("forward", "filter", "forward", 0, "accept"));
            assertThat(v4.rulesOf("postrtg")).containsExactly(
                    "meta mark 0x4000 return",
                    "ip saddr " + pod + " ip daddr 10.244.0.0/16 return",
                    "ip saddr 10.244.0.0/16 ip daddr " + pod + " return",
                    "ip saddr != " + pod + " ip daddr 10.244.0.0/16 return",
                    "ip saddr 10.244.0.0/16 ip daddr != 224.0.0.0/4 masquerade fully-random",
                    "ip saddr != 10.244.0.0/16 ip daddr 10.244.0.0/16 masquerade fully-random");
            assertThat(v4.rulesOf("forward")).containsExactly("ip saddr 10.244.0.0/16 accept", "ip daddr 10.244.0.0/16 accept");
            assertThat(NftJson.parse(ns.exec("nft", "-j", "list", "table", "ip6", "flannel-ipv6")).chains()).isEmpty();
            assertThat(iptables(ns)).doesNotContain("FLANNEL"); // the other implementation cleaned up, jumps first

            // back to iptables mode: the tables go, the iptables chains come back
            etcd.put(CONFIG, IPT_CONF);
            runUntilReadyAndStop(ns, subnetFile, Map.of(), "Starting flannel in iptables mode");
            assertThat(ns.exec("nft", "list", "tables")).doesNotContain("flannel");
            assertThat(iptables(ns)).contains("-A POSTROUTING -m comment --comment \"flanneld masq\" -j FLANNEL-POSTRTG",
                    "-A FORWARD -m comment --comment \"flanneld forward\" -j FLANNEL-FWD");
        }
    }

    @Test
    void withoutNftTheDaemonSkipsTheIptablesCleanupAndExits1NoNftablesSupport(@TempDir Path dir) throws Exception {
        try (ThrowawayNs ns = ThrowawayNs.node("fdnx"); NsEtcd etcd = NsEtcd.start(ns)) {
            etcd.put(CONFIG, NFT_CONF);
            // neither nft nor iptables on the daemon's PATH
            String err = runToExit1(ns, dir, Map.of("PATH", dir.resolve("empty-bin").toString()));
            assertThat(err).contains("iptables cleanup skipped binary=iptables", "iptables cleanup skipped binary=ip6tables",
                    "no nftables support: could not find nftables binary: ");
        }
    }

    @Test
    void aMasqueradeTransactionTheKernelRejectsExits1(@TempDir Path dir) throws Exception {
        try (ThrowawayNs ns = ThrowawayNs.node("fdnm"); NsEtcd etcd = NsEtcd.start(ns)) {
            etcd.put(CONFIG, NFT_CONF);
            // a postrtg chain of another type: adding our nat chain of that name fails in the kernel
            Path setup = dir.resolve("setup.nft");
            Files.writeString(setup, "add table ip flannel-ipv4\n"
                    + "add chain ip flannel-ipv4 postrtg { type filter hook input priority filter ; }\n");
            ns.exec("nft", "-f", setup.toString());
            assertThat(runToExit1(ns, dir, Map.of())).contains("nftables: couldn't setup masq rules: nft -f -: exit 1: ");
        }
    }

    /** Runs the daemon with --ip-masq until it is ready, stops it (exit 0); returns the own subnet (10.244.X.0/24). */
    private static String runUntilReadyAndStop(ThrowawayNs ns, Path subnetFile, Map<String, String> env, String modeLine)
            throws Exception {
        Files.deleteIfExists(subnetFile);
        try (DaemonProcess d = DaemonProcess.start(ns.execPrefix(), env, "--etcd-endpoints=" + NsEtcd.ENDPOINT,
                "--subnet-file=" + subnetFile, "--ip-masq")) {
            assertThat(d.awaitStderr(s -> s.contains("lease snapshot programmed"), WAIT)).as("%s", d.stderr()).isTrue();
            assertThat(d.stderr()).contains(modeLine);
            d.terminate();
            assertThat(d.waitFor(WAIT)).as("%s", d.stderr()).isZero();
        }
        return Files.readAllLines(subnetFile).stream().filter(l -> l.startsWith("FLANNEL_SUBNET=")).findFirst().orElseThrow()
                .replaceAll("FLANNEL_SUBNET=(\\d+\\.\\d+\\.\\d+)\\.1/(\\d+)", "$1.0/$2");
    }

    private static String runToExit1(ThrowawayNs ns, Path dir, Map<String, String> env) throws Exception {
        try (DaemonProcess d = DaemonProcess.start(ns.execPrefix(), env, "--etcd-endpoints=" + NsEtcd.ENDPOINT,
                "--subnet-file=" + dir.resolve("subnet.env"), "--ip-masq")) {
            assertThat(d.waitFor(WAIT)).as("%s", d.stderr()).isEqualTo(1);
            assertThat(dir.resolve("subnet.env")).doesNotExist();
            return d.stderr();
        }
    }

    private static String iptables(ThrowawayNs ns) throws Exception {
        return String.join("\n", List.of(ns.exec("iptables", "-t", "nat", "-S"), ns.exec("iptables", "-t", "filter", "-S")));
    }
}
