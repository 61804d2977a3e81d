package org.jflannel.flanneld.iptables;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Arrays;
import java.util.List;
import org.jflannel.flanneld.health.Metrics;
import org.jflannel.flanneld.testing.ThrowawayNs;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The rules in a throwaway namespace's own iptables (never the host's), checked with iptables -S. */
@Tag("netns")
class IptablesManagerIT {
    static final String C = "10.244.0.0/16";
    static final String P = "10.244.1.0/24";

    @Test
    void bootstrapResyncPreviousSubnetAndCleanup() throws Exception {
        try (ThrowawayNs ns = ThrowawayNs.create("fdipt");
             IptablesManager ipt = new IptablesManager(ns.execPrefix(), 1, new Metrics())) {
            ipt.setupMasquerade(false, C, P, false);
            ipt.setupForward(false, C);
            List<IptRule> masq = FlannelRules.masquerade(C, P, false, true);
            List<IptRule> fwd = FlannelRules.forward(C);
            assertThat(appends(ns, "nat")).containsExactlyElementsOf(text(masq));
            assertThat(appends(ns, "filter")).containsExactlyElementsOf(text(fwd));

            // a rule deleted by hand comes back, in its place, after one resync pass
            ns.exec("iptables", "-t", "nat", "-D", "FLANNEL-POSTRTG", "-s", P, "-d", C, "-m", "comment", "--comment",
                    "flanneld masq", "-j", "RETURN");
            assertThat(appends(ns, "nat")).hasSize(masq.size() - 1);
            assertThat(ipt.resyncOnce()).isEqualTo(1);
            assertThat(appends(ns, "nat")).containsExactlyElementsOf(text(masq));
            assertThat(ipt.resyncOnce()).isZero();

            // a restart bootstraps again without duplicating anything
            ipt.setupMasquerade(false, C, P, false);
            assertThat(appends(ns, "nat")).containsExactlyElementsOf(text(masq));

            // the subnet changed since the previous run: the old subnet's rules go, the new ones come
            String newP = "10.244.7.0/24";
            ipt.deletePreviousMasquerade(false, C, P, C, newP);
            assertThat(appends(ns, "nat")).noneMatch(l -> l.contains(P));
            ipt.setupMasquerade(false, C, newP, false);
            assertThat(appends(ns, "nat")).containsExactlyElementsOf(text(FlannelRules.masquerade(C, newP, false, true)));

            // Ours cleanup: jump rules first, then the chains (FLANNEL-FWD in filter)
            ipt.cleanup();
            assertThat(ns.exec("iptables", "-t", "nat", "-S")).doesNotContain("FLANNEL");
            assertThat(ns.exec("iptables", "-t", "filter", "-S")).doesNotContain("FLANNEL");
        }
    }

    @Test
    void ipv6RulesGoToIp6tablesWithoutRandomFullyWhenDisabled() throws Exception {
        try (ThrowawayNs ns = ThrowawayNs.create("fdip6");
             IptablesManager ipt = new IptablesManager(ns.execPrefix(), 1, new Metrics())) {
            ipt.setupMasquerade(true, "2001:cafe:42::/56", "2001:cafe:42:1::/64", true);
            ipt.setupForward(true, "2001:cafe:42::/56");
            assertThat(appends(ns, "ip6tables", "nat"))
                    .containsExactlyElementsOf(text(FlannelRules.masquerade("2001:cafe:42::/56", "2001:cafe:42:1::/64", true, false)));
            assertThat(appends(ns, "ip6tables", "filter")).containsExactlyElementsOf(text(FlannelRules.forward("2001:cafe:42::/56")));
            assertThat(appends(ns, "nat")).isEmpty();
            ipt.cleanup();
            assertThat(ns.exec("ip6tables", "-t", "nat", "-S")).doesNotContain("FLANNEL");
            assertThat(ns.exec("ip6tables", "-t", "filter", "-S")).doesNotContain("FLANNEL");
        }
    }

    private static List<String> appends(ThrowawayNs ns, String table) throws Exception {
        return appends(ns, "iptables", table);
    }

    private static List<String> appends(ThrowawayNs ns, String binary, String table) throws Exception {
        return Arrays.stream(ns.exec(binary, "-t", table, "-S").split("\n")).filter(l -> l.startsWith("-A ")).toList();
    }

    private static List<String> text(List<IptRule> rules) {
        return rules.stream().map(r -> RestorePayload.build(java.util.Map.of(r.table(), List.of(r.withAction("-A"))))
                .split("\n")[1]).toList();
    }
}
