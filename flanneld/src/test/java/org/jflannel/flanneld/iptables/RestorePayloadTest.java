package org.jflannel.flanneld.iptables;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The bootstrap payload against the golden rules of REFERENCE §8.1/8.2, byte for byte. */
class RestorePayloadTest {

    @Test
    void masqueradeBootstrapOnAnEmptyTableAppendsTheGoldenRulesInOrder() {
        List<IptRule> rules = FlannelRules.masquerade("10.244.0.0/16", "10.244.1.0/24", false, true);
        assertThat(RestorePayload.build(RuleSet.bootstrapLines(rules, r -> false))).isEqualTo("""
                *nat
                -A POSTROUTING -m comment --comment "flanneld masq" -j FLANNEL-POSTRTG
                -A FLANNEL-POSTRTG -m mark --mark 0x4000/0x4000 -m comment --comment "flanneld masq" -j RETURN
                -A FLANNEL-POSTRTG -s 10.244.1.0/24 -d 10.244.0.0/16 -m comment --comment "flanneld masq" -j RETURN
                -A FLANNEL-POSTRTG -s 10.244.0.0/16 -d 10.244.1.0/24 -m comment --comment "flanneld masq" -j RETURN
                -A FLANNEL-POSTRTG ! -s 10.244.0.0/16 -d 10.244.1.0/24 -m comment --comment "flanneld masq" -j RETURN
                -A FLANNEL-POSTRTG -s 10.244.0.0/16 ! -d 224.0.0.0/4 -m comment --comment "flanneld masq" -j MASQUERADE --random-fully
                -A FLANNEL-POSTRTG ! -s 10.244.0.0/16 -d 10.244.0.0/16 -m comment --comment "flanneld masq" -j MASQUERADE --random-fully
                COMMIT
                """);
    }

    @Test
    void withoutRandomFullyTheMasqueradeRulesEndInMasquerade() {
        List<IptRule> rules = FlannelRules.masquerade("10.244.0.0/16", "10.244.1.0/24", false, false);
        String payload = RestorePayload.build(RuleSet.bootstrapLines(rules, r -> false));
        assertThat(payload).doesNotContain("--random-fully")
                .contains("-A FLANNEL-POSTRTG -s 10.244.0.0/16 ! -d 224.0.0.0/4 -m comment --comment \"flanneld masq\" -j MASQUERADE\n");
    }

    @Test
    void ipv6MasqueradeUsesTheV6MulticastRange() {
        List<IptRule> rules = FlannelRules.masquerade("2001:cafe:42::/56", "2001:cafe:42::/64", true, true);
        assertThat(RestorePayload.build(RuleSet.bootstrapLines(rules, r -> false))).contains(
                "-A FLANNEL-POSTRTG -s 2001:cafe:42::/56 ! -d ff00::/8 -m comment --comment \"flanneld masq\" -j MASQUERADE --random-fully\n");
    }

    @Test
    void forwardBootstrapOnAnEmptyTable() {
        assertThat(RestorePayload.build(RuleSet.bootstrapLines(FlannelRules.forward("10.244.0.0/16"), r -> false))).isEqualTo("""
                *filter
                -A FORWARD -m comment --comment "flanneld forward" -j FLANNEL-FWD
                -A FLANNEL-FWD -s 10.244.0.0/16 -m comment --comment "flanneld forward" -j ACCEPT
                -A FLANNEL-FWD -d 10.244.0.0/16 -m comment --comment "flanneld forward" -j ACCEPT
                COMMIT
                """);
    }

    @Test
    void existingRulesAreDeletedAndReappendedInTheSameTransactionKeepingTheOrder() {
        List<IptRule> rules = FlannelRules.forward("10.244.0.0/16");
        Set<IptRule> existing = Set.of(rules.get(0), rules.get(2));
        assertThat(RestorePayload.build(RuleSet.bootstrapLines(rules, existing::contains))).isEqualTo("""
                *filter
                -D FORWARD -m comment --comment "flanneld forward" -j FLANNEL-FWD
                -A FORWARD -m comment --comment "flanneld forward" -j FLANNEL-FWD
                -A FLANNEL-FWD -s 10.244.0.0/16 -m comment --comment "flanneld forward" -j ACCEPT
                -D FLANNEL-FWD -d 10.244.0.0/16 -m comment --comment "flanneld forward" -j ACCEPT
                -A FLANNEL-FWD -d 10.244.0.0/16 -m comment --comment "flanneld forward" -j ACCEPT
                COMMIT
                """);
    }

    @Test
    void versionComparisonForWaitAndRandomFully() {
        assertThat(IptablesCli.atLeast(new int[] {1, 6, 2}, 1, 6, 2)).isTrue();
        assertThat(IptablesCli.atLeast(new int[] {1, 8, 9}, 1, 6, 2)).isTrue();
        assertThat(IptablesCli.atLeast(new int[] {1, 6, 1}, 1, 6, 2)).isFalse();
        assertThat(IptablesCli.atLeast(new int[] {1, 4, 21}, 1, 6, 2)).isFalse();
        assertThat(IptablesCli.atLeast(new int[] {2, 0, 0}, 1, 6, 2)).isTrue();
    }
}
