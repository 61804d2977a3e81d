package org.jflannel.flanneld.nftables;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/** The {@code nft -f} payloads against golden text written from REFERENCE §8.4, byte for byte. */
class NftPayloadTest {
    static final String C4 = "10.244.0.0/16";
    static final String P4 = "10.244.1.0/24";
    static final String C6 = "2001:cafe:42::/56";
    static final String P6 = "2001:cafe:42:1::/64";

    static Stream<Arguments> masquerade() {
        return Stream.of(
                Arguments.of("v4 fully-random", false, C4, P4, true, """
                        add chain ip flannel-ipv4 postrtg { type nat hook postrouting priority srcnat ; }
                        flush chain ip flannel-ipv4 postrtg
                        add rule ip flannel-ipv4 postrtg meta mark 0x4000 return
                        add rule ip flannel-ipv4 postrtg ip saddr 10.244.1.0/24 ip daddr 10.244.0.0/16 return
                        add rule ip flannel-ipv4 postrtg ip saddr 10.244.0.0/16 ip daddr 10.244.1.0/24 return
                        add rule ip flannel-ipv4 postrtg ip saddr != 10.244.1.0/24 ip daddr 10.244.0.0/16 return
                        add rule ip flannel-ipv4 postrtg ip saddr 10.244.0.0/16 ip daddr != 224.0.0.0/4 masquerade fully-random
                        add rule ip flannel-ipv4 postrtg ip saddr != 10.244.0.0/16 ip daddr 10.244.0.0/16 masquerade fully-random
                        """),
                Arguments.of("v4 plain", false, C4, P4, false, """
                        add chain ip flannel-ipv4 postrtg { type nat hook postrouting priority srcnat ; }
                        flush chain ip flannel-ipv4 postrtg
                        add rule ip flannel-ipv4 postrtg meta mark 0x4000 return
                        add rule ip flannel-ipv4 postrtg ip saddr 10.244.1.0/24 ip daddr 10.244.0.0/16 return
                        add rule ip flannel-ipv4 postrtg ip saddr 10.244.0.0/16 ip daddr 10.244.1.0/24 return
                        add rule ip flannel-ipv4 postrtg ip saddr != 10.244.1.0/24 ip daddr 10.244.0.0/16 return
                        add rule ip flannel-ipv4 postrtg ip saddr 10.244.0.0/16 ip daddr != 224.0.0.0/4 masquerade
                        add rule ip flannel-ipv4 postrtg ip saddr != 10.244.0.0/16 ip daddr 10.244.0.0/16 masquerade
                        """),
                Arguments.of("v6 fully-random", true, C6, P6, true, """
                        add chain ip6 flannel-ipv6 postrtg { type nat hook postrouting priority srcnat ; }
                        flush chain ip6 flannel-ipv6 postrtg
                        add rule ip6 flannel-ipv6 postrtg meta mark 0x4000 return
                        add rule ip6 flannel-ipv6 postrtg ip6 saddr 2001:cafe:42:1::/64 ip6 daddr 2001:cafe:42::/56 return
                        add rule ip6 flannel-ipv6 postrtg ip6 saddr 2001:cafe:42::/56 ip6 daddr 2001:cafe:42:1::/64 return
                        add rule ip6 flannel-ipv6 postrtg ip6 saddr != 2001:cafe:42:1::/64 ip6 daddr 2001:cafe:42::/56 return
                        add rule ip6 flannel-ipv6 postrtg ip6 saddr 2001:cafe:42::/56 ip6 daddr != ff00::/8 masquerade fully-random
                        add rule ip6 flannel-ipv6 postrtg ip6 saddr != 2001:cafe:42::/56 ip6 daddr 2001:cafe:42::/56 masquerade fully-random
                        """),
                Arguments.of("v6 plain", true, C6, P6, false, """
                        add chain ip6 flannel-ipv6 postrtg { type nat hook postrouting priority srcnat ; }
                        flush chain ip6 flannel-ipv6 postrtg
                        add rule ip6 flannel-ipv6 postrtg meta mark 0x4000 return
                        add rule ip6 flannel-ipv6 postrtg ip6 saddr 2001:cafe:42:1::/64 ip6 daddr 2001:cafe:42::/56 return
                        add rule ip6 flannel-ipv6 postrtg ip6 saddr 2001:cafe:42::/56 ip6 daddr 2001:cafe:42:1::/64 return
                        add rule ip6 flannel-ipv6 postrtg ip6 saddr != 2001:cafe:42:1::/64 ip6 daddr 2001:cafe:42::/56 return
                        add rule ip6 flannel-ipv6 postrtg ip6 saddr 2001:cafe:42::/56 ip6 daddr != ff00::/8 masquerade
                        add rule ip6 flannel-ipv6 postrtg ip6 saddr != 2001:cafe:42::/56 ip6 daddr 2001:cafe:42::/56 masquerade
                        """));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource
    void masquerade(String name, boolean ipv6, String cluster, String pod, boolean fullyRandom, String golden) {
        assertThat(NftPayload.masquerade(ipv6, cluster, pod, fullyRandom)).isEqualTo(golden);
    }

    static Stream<Arguments> forward() {
        return Stream.of(
                Arguments.of(false, C4, """
                        add chain ip flannel-ipv4 forward { type filter hook forward priority filter ; }
                        flush chain ip flannel-ipv4 forward
                        add rule ip flannel-ipv4 forward ip saddr 10.244.0.0/16 accept
                        add rule ip flannel-ipv4 forward ip daddr 10.244.0.0/16 accept
                        """),
                Arguments.of(true, C6, """
                        add chain ip6 flannel-ipv6 forward { type filter hook forward priority filter ; }
                        flush chain ip6 flannel-ipv6 forward
                        add rule ip6 flannel-ipv6 forward ip6 saddr 2001:cafe:42::/56 accept
                        add rule ip6 flannel-ipv6 forward ip6 daddr 2001:cafe:42::/56 accept
                        """));
    }

    @ParameterizedTest(name = "ipv6={0}")
    @MethodSource
    void forward(boolean ipv6, String cluster, String golden) {
        assertThat(NftPayload.forward(ipv6, cluster)).isEqualTo(golden);
    }

    /** Dual stack: each family goes to its own table; nothing of one family leaks into the other's payload. */
    @Test
    void dualStackPayloadsStayInTheirOwnTables() {
        String v4 = NftPayload.masquerade(false, C4, P4, true) + NftPayload.forward(false, C4);
        String v6 = NftPayload.masquerade(true, C6, P6, true) + NftPayload.forward(true, C6);
        assertThat(v4.lines()).allMatch(l -> l.contains(" ip flannel-ipv4 ")).noneMatch(l -> l.contains("ip6"))
                .hasSize(12);
        assertThat(v6.lines()).allMatch(l -> l.contains(" ip6 flannel-ipv6 ")).noneMatch(l -> l.contains(" ip "))
                .noneMatch(l -> l.contains("flannel-ipv4")).hasSize(12);
    }

    @Test
    void initCreatesEachTableWithItsComment() {
        assertThat(NftPayload.initTable(false)).isEqualTo("add table ip flannel-ipv4 { comment \"rules for flannel-ipv4\" ; }\n");
        assertThat(NftPayload.initTable(true)).isEqualTo("add table ip6 flannel-ipv6 { comment \"rules for flannel-ipv6\" ; }\n");
    }

    @Test
    void fullyRandomProbeUsesATestChainInTheFamilyTable() {
        assertThat(NftPayload.fullyRandomProbe(false)).isEqualTo("""
                add chain ip flannel-ipv4 test-chain { comment "chain to test if fully-random is supported" ; }
                add rule ip flannel-ipv4 test-chain masquerade fully-random
                """);
    }

    @Test
    void cleanupDeletesBothTablesAddingThemFirstSoThatAMissingTableIsNoError() {
        assertThat(NftPayload.deleteTables()).isEqualTo("""
                add table ip flannel-ipv4
                delete table ip flannel-ipv4
                add table ip6 flannel-ipv6
                delete table ip6 flannel-ipv6
                """);
    }
}
