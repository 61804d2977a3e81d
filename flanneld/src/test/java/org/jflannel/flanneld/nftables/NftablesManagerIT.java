package org.jflannel.flanneld.nftables;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.util.List;
import org.jflannel.flanneld.health.Metrics;
import org.jflannel.flanneld.testing.ThrowawayNs;
import org.jflannel.testsupport.nft.NftJson;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The real {@code nft} in a throwaway namespace (never the host's ruleset); what the kernel holds
 * is read back with {@code nft -j list table} as an independent witness.
 */
@Tag("netns")
class NftablesManagerIT {
    static final String C = "10.244.0.0/16";
    static final String P = "10.244.1.0/24";
    static final String C6 = "2001:cafe:42::/56";
    static final String P6 = "2001:cafe:42:1::/64";

    static List<String> masqGolden(String f, String c, String p, String multicast, String masq) {
        return List.of(
                "meta mark 0x4000 return",
                f + " saddr " + p + " " + f + " daddr " + c + " return",
                f + " saddr " + c + " " + f + " daddr " + p + " return",
                f + " saddr != " + p + " " + f + " daddr " + c + " return",
                f + " saddr " + c + " " + f + " daddr != " + multicast + " " + masq,
                f + " saddr != " + c + " " + f + " daddr " + c + " " + masq);
    }

    @Test
    void ipv4InitMasqueradeAndForwardThenReapplyAndSubnetChangeLeaveExactlyTheCurrentRules() throws Exception {
        try (ThrowawayNs ns = ThrowawayNs.create("fdnft")) {
            NftablesManager nft = new NftablesManager(ns.execPrefix(), new Metrics());
            nft.init();
            assertThat(nft.fullyRandomSupported(false)).as("fully-random on this kernel").isTrue();
            nft.setupMasquerade(false, C, P, false);
            nft.setupForward(false, C);

            NftJson v4 = list(ns, "ip", "flannel-ipv4");
            assertThat(v4.chain("postrtg")).isEqualTo(new NftJson.Chain("postrtg", "nat", "postrouting", 100, "accept"));
            assertThat(v4.chain("forward")).isEqualTo(new NftJson.Chain("forward", "filter", "forward", 0, "accept"));
            assertThat(v4.chains()).hasSize(2); // the fully-random test chain was only checked, never committed
            assertThat(v4.rulesOf("postrtg")).containsExactlyElementsOf(
                    masqGolden("ip", C, P, "224.0.0.0/4", "masquerade fully-random"));
            assertThat(v4.rulesOf("forward")).containsExactly("ip saddr " + C + " accept", "ip daddr " + C + " accept");
            // Init creates both tables with their comment, even IPv4-only (nft 1.0.6's JSON omits table comments)
            assertThat(list(ns, "ip6", "flannel-ipv6").chains()).isEmpty();
            assertThat(ns.exec("nft", "list", "table", "ip", "flannel-ipv4")).contains("comment \"rules for flannel-ipv4\"");
            assertThat(ns.exec("nft", "list", "table", "ip6", "flannel-ipv6")).contains("comment \"rules for flannel-ipv6\"");

            // a restart applies everything again: flushed and rebuilt, nothing doubled
            nft.init();
            nft.setupMasquerade(false, C, P, false);
            nft.setupForward(false, C);
            NftJson again = list(ns, "ip", "flannel-ipv4");
            assertThat(again.ruleCount()).isEqualTo(8);
            assertThat(again.rules()).isEqualTo(v4.rules());

            // the subnet changed since the previous run: the flush removes the old subnet's rules
            String newP = "10.244.7.0/24";
            nft.setupMasquerade(false, C, newP, false);
            assertThat(list(ns, "ip", "flannel-ipv4").rulesOf("postrtg")).containsExactlyElementsOf(
                    masqGolden("ip", C, newP, "224.0.0.0/4", "masquerade fully-random"));
        }
    }

    @Test
    void ipv6RulesGoToTheIp6TableWithPlainMasqueradeWhenFullyRandomIsDisabled() throws Exception {
        try (ThrowawayNs ns = ThrowawayNs.create("fdnf6")) {
            NftablesManager nft = new NftablesManager(ns.execPrefix(), new Metrics());
            nft.init();
            nft.setupMasquerade(true, C6, P6, true);
            nft.setupForward(true, C6);
            NftJson v6 = list(ns, "ip6", "flannel-ipv6");
            assertThat(v6.chain("postrtg")).isEqualTo(new NftJson.Chain("postrtg", "nat", "postrouting", 100, "accept"));
            assertThat(v6.chain("forward")).isEqualTo(new NftJson.Chain("forward", "filter", "forward", 0, "accept"));
            assertThat(v6.rulesOf("postrtg")).containsExactlyElementsOf(masqGolden("ip6", C6, P6, "ff00::/8", "masquerade"));
            assertThat(v6.rulesOf("forward")).containsExactly("ip6 saddr " + C6 + " accept", "ip6 daddr " + C6 + " accept");
            assertThat(list(ns, "ip", "flannel-ipv4").chains()).isEmpty();
        }
    }

    @Test
    void whenTheFullyRandomCheckIsRejectedTheRulesUsePlainMasquerade() throws Exception {
        try (ThrowawayNs ns = ThrowawayNs.create("fdnfr")) {
            // a filter base chain named like upstream's test chain: the kernel refuses masquerade there
            nftRun(ns, "add table ip flannel-ipv4\nadd chain ip flannel-ipv4 test-chain { type filter hook forward priority filter ; }\n");
            NftablesManager nft = new NftablesManager(ns.execPrefix(), new Metrics());
            nft.init();
            assertThat(nft.fullyRandomSupported(false)).isFalse();
            nft.setupMasquerade(false, C, P, false);
            assertThat(list(ns, "ip", "flannel-ipv4").rulesOf("postrtg"))
                    .containsExactlyElementsOf(masqGolden("ip", C, P, "224.0.0.0/4", "masquerade"));
        }
    }

    @Test
    void aRejectedMasqueradeTransactionFailsWithTheUpstreamMessageAndChangesNothing() throws Exception {
        try (ThrowawayNs ns = ThrowawayNs.create("fdnfm")) {
            nftRun(ns, "add table ip flannel-ipv4\nadd chain ip flannel-ipv4 postrtg { type filter hook input priority filter ; }\n"
                    + "add rule ip flannel-ipv4 postrtg accept\n");
            NftablesManager nft = new NftablesManager(ns.execPrefix(), new Metrics());
            nft.init();
            assertThatThrownBy(() -> nft.setupMasquerade(false, C, P, false)).isInstanceOf(IOException.class)
                    .hasMessageStartingWith("nftables: couldn't setup masq rules: nft -f -: exit 1: ");
            NftJson after = list(ns, "ip", "flannel-ipv4");
            assertThat(after.chain("postrtg")).isEqualTo(new NftJson.Chain("postrtg", "filter", "input", 0, "accept"));
            assertThat(after.rulesOf("postrtg")).containsExactly("accept"); // the flush was rolled back with the rest
            nft.setupForward(false, C); // forward rules do not depend on it
            assertThat(list(ns, "ip", "flannel-ipv4").rulesOf("forward")).hasSize(2);
        }
    }

    @Test
    void cleanupDeletesBothTablesAndNeverFails() throws Exception {
        try (ThrowawayNs ns = ThrowawayNs.create("fdnfc")) {
            NftablesManager nft = new NftablesManager(ns.execPrefix(), new Metrics());
            nft.init();
            nft.setupMasquerade(false, C, P, false);
            nft.setupForward(true, C6);
            nftRun(ns, "add table ip other\n"); // somebody else's table stays
            nft.cleanup();
            assertThat(ns.exec("nft", "list", "tables")).doesNotContain("flannel").contains("table ip other");
            nft.cleanup(); // nothing left to delete: still no error
            assertThat(ns.exec("nft", "list", "tables")).doesNotContain("flannel");

            NftablesManager noBinary = new NftablesManager(List.of("/nonexistent/jflannel-nft"), new Metrics());
            noBinary.cleanup();
            assertThatThrownBy(noBinary::init).isInstanceOf(IOException.class)
                    .hasMessageStartingWith("no nftables support: could not find nftables binary: ");
        }
    }

    private static NftJson list(ThrowawayNs ns, String family, String table) throws Exception {
        return NftJson.parse(ns.exec("nft", "-j", "list", "table", family, table));
    }

    /** Test setup through a file, so that the payload reaches nft as text without a shell. */
    private static void nftRun(ThrowawayNs ns, String payload) throws Exception {
        java.nio.file.Path f = java.nio.file.Files.createTempFile("nft-setup", ".nft");
        try {
            java.nio.file.Files.writeString(f, payload);
            ns.exec("nft", "-f", f.toString());
        } finally {
            java.nio.file.Files.deleteIfExists(f);
        }
    }
}
