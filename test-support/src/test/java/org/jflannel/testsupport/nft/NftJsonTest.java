package org.jflannel.testsupport.nft;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

/** The witness parser on output captured from nft 1.0.6 (Debian 12), trimmed. */
class NftJsonTest {
    static final String SAMPLE = """
            {"nftables": [{"metainfo": {"version": "1.0.6", "release_name": "Lester Gooch #5", "json_schema_version": 1}},
            {"table": {"family": "ip", "name": "flannel-ipv4", "handle": 1}},
            {"chain": {"family": "ip", "table": "flannel-ipv4", "name": "postrtg", "handle": 1, "type": "nat",
              "hook": "postrouting", "prio": 100, "policy": "accept"}},
            {"rule": {"family": "ip", "table": "flannel-ipv4", "chain": "postrtg", "handle": 2, "expr": [
              {"match": {"op": "==", "left": {"meta": {"key": "mark"}}, "right": 16384}}, {"return": null}]}},
            {"rule": {"family": "ip", "table": "flannel-ipv4", "chain": "postrtg", "handle": 3, "expr": [
              {"match": {"op": "==", "left": {"payload": {"protocol": "ip", "field": "saddr"}},
                "right": {"prefix": {"addr": "10.244.0.0", "len": 16}}}},
              {"match": {"op": "!=", "left": {"payload": {"protocol": "ip", "field": "daddr"}},
                "right": {"prefix": {"addr": "224.0.0.0", "len": 4}}}},
              {"masquerade": {"flags": "fully-random"}}]}},
            {"chain": {"family": "ip", "table": "flannel-ipv4", "name": "plain", "handle": 4}}
            ]}
            """;

    @Test
    void baseChainAttributesAndRulesRenderedBackToNftSyntax() throws Exception {
        NftJson t = NftJson.parse(SAMPLE);
        assertThat(t.chain("postrtg")).isEqualTo(new NftJson.Chain("postrtg", "nat", "postrouting", 100, "accept"));
        assertThat(t.chain("plain")).isEqualTo(new NftJson.Chain("plain", null, null, null, null));
        assertThat(t.rulesOf("postrtg")).containsExactly("meta mark 0x4000 return",
                "ip saddr 10.244.0.0/16 ip daddr != 224.0.0.0/4 masquerade fully-random");
        assertThat(t.rulesOf("plain")).isEmpty();
        assertThat(t.ruleCount()).isEqualTo(2);
    }

    @Test
    void unknownStatementFailsLoudly() {
        assertThatThrownBy(() -> NftJson.parse("""
                {"nftables": [{"rule": {"chain": "c", "expr": [{"counter": {"packets": 0, "bytes": 0}}]}}]}
                """)).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("counter");
    }
}
