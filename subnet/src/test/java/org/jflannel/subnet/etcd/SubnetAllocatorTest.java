package org.jflannel.subnet.etcd;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.jflannel.core.Ip4Net;
import org.jflannel.core.Ip6Net;
import org.jflannel.core.NetConf;
import org.junit.jupiter.api.Test;

class SubnetAllocatorTest {
    private static final String V4 = "{\"Network\":\"10.1.0.0/16\",\"SubnetLen\":24,\"SubnetMin\":\"10.1.10.0\",\"SubnetMax\":\"10.1.12.0\",\"Backend\":{\"Type\":\"vxlan\"}}";
    private static final String DUAL = "{\"Network\":\"10.1.0.0/16\",\"EnableIPv6\":true,\"IPv6Network\":\"fc00::/48\",\"Backend\":{\"Type\":\"vxlan\"}}";

    @Test
    void freeSubnetsLieBetweenMinAndMaxAndSkipTakenOnes() throws Exception {
        SubnetAllocator a = new SubnetAllocator(NetConf.parse(V4, NetConf.Mode.ETCD), new Random(1));
        List<Ip4Net> taken = List.of(Ip4Net.parse("10.1.10.0/24"), Ip4Net.parse("10.1.12.0/24"));
        Set<Ip4Net> seen = new HashSet<>();
        for (int i = 0; i < 50; i++) {
            seen.add(a.free4(taken).orElseThrow());
        }
        assertThat(seen).containsExactly(Ip4Net.parse("10.1.11.0/24"));
    }

    @Test
    void noFreeSubnetGivesEmpty() throws Exception {
        SubnetAllocator a = new SubnetAllocator(NetConf.parse(V4, NetConf.Mode.ETCD), new Random(1));
        assertThat(a.free4(List.of(Ip4Net.parse("10.1.0.0/16")))).isEmpty();
    }

    @Test
    void randomChoiceIsAmongTheFirstHundredFreeSubnets() throws Exception {
        String conf = "{\"Network\":\"10.0.0.0/8\",\"SubnetLen\":24,\"Backend\":{\"Type\":\"vxlan\"}}";
        SubnetAllocator a = new SubnetAllocator(NetConf.parse(conf, NetConf.Mode.ETCD), new Random(7));
        List<Ip4Net> taken = new ArrayList<>();
        Set<Ip4Net> seen = new HashSet<>();
        for (int i = 0; i < 500; i++) {
            seen.add(a.free4(taken).orElseThrow());
        }
        Ip4Net first = Ip4Net.parse("10.0.1.0/24"); // SubnetMin: the first subnet is skipped
        assertThat(seen).allMatch(s -> s.compareTo(first) >= 0 && Ip4Net.parse("10.0.0.0/8").indexOf(s) <= 100);
        assertThat(seen.size()).isGreaterThan(50);
    }

    @Test
    void compatibilityNeedsTheConfiguredStacksLengthsAndRange() throws Exception {
        SubnetAllocator v4 = new SubnetAllocator(NetConf.parse(V4, NetConf.Mode.ETCD), new Random());
        assertThat(v4.compatible(Ip4Net.parse("10.1.11.0/24"), null)).isTrue();
        assertThat(v4.compatible(Ip4Net.parse("10.1.13.0/24"), null)).isFalse();
        assertThat(v4.compatible(Ip4Net.parse("10.1.11.0/25"), null)).isFalse();
        assertThat(v4.compatible(Ip4Net.parse("10.1.11.0/24"), Ip6Net.parse("fc00::/64"))).isFalse();

        SubnetAllocator dual = new SubnetAllocator(NetConf.parse(DUAL, NetConf.Mode.ETCD), new Random());
        assertThat(dual.compatible(Ip4Net.parse("10.1.11.0/24"), Ip6Net.parse("fc00:0:0:5::/64"))).isTrue();
        assertThat(dual.compatible(Ip4Net.parse("10.1.11.0/24"), null)).isFalse();
        assertThat(dual.free6(List.of())).get().matches(s -> s.prefixLength() == 64);
    }
}
