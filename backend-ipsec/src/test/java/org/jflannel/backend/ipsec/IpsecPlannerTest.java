package org.jflannel.backend.ipsec;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.InetAddress;
import java.util.List;
import org.jflannel.backend.ipsec.vici.ViciMessage;
import org.jflannel.linuxnet.netlink.IpPrefix;
import org.jflannel.linuxnet.netlink.XfrmPolicy;
import org.junit.jupiter.api.Test;

/** upstream's per-peer plan, field by field (handle_charon.go's LoadConnection, handle_xfrm.go, ipsec_network.go). */
class IpsecPlannerTest {
    private static final String ESP = "aes128gcm16-sha256-prfsha256-ecp256";
    private final IpsecPlanner planner = new IpsecPlanner(Leases.lease("10.244.1.0/24", "192.0.2.1"), ESP, false);

    @Test
    void aPeerGetsUpstreamsConnectionNamedAfterBothEnds() {
        IpsecPeer p = planner.plan(Leases.lease("10.244.2.0/24", "192.0.2.2"));
        assertThat(p.connName()).isEqualTo("192.0.2.1-10.244.1.0/24-10.244.2.0/24-192.0.2.2");
        assertThat(p.peerPublicIp()).isEqualTo("192.0.2.2");
        ViciMessage c = p.conn();
        assertThat(c.list("local_addrs")).containsExactly("192.0.2.1");
        assertThat(c.list("remote_addrs")).containsExactly("192.0.2.2");
        assertThat(c.list("proposals")).containsExactly("aes256-sha256-modp4096");
        assertThat(c.value("version")).isEqualTo("2");
        assertThat(c.value("encap")).isEqualTo("false");
        assertThat(c.value("keyingtries")).isEqualTo("0");
        assertThat(c.section("local").value("auth")).isEqualTo("psk");
        assertThat(c.section("remote").value("auth")).isEqualTo("psk");
        assertThat(c.section("children").keys()).containsExactly("10.244.1.0/24-10.244.2.0/24");
        ViciMessage child = c.section("children").section("10.244.1.0/24-10.244.2.0/24");
        assertThat(child.list("local_ts")).containsExactly("10.244.1.0/24");
        assertThat(child.list("remote_ts")).containsExactly("10.244.2.0/24");
        assertThat(child.list("esp_proposals")).containsExactly(ESP);
        assertThat(child.value("start_action")).isEqualTo("start");
        assertThat(child.value("close_action")).isEqualTo("trap");
        assertThat(child.value("dpd_action")).isEqualTo("restart");
        assertThat(child.value("mode")).isEqualTo("tunnel");
        assertThat(child.value("reqid")).isEqualTo("11");
        assertThat(child.value("rekey_time")).isEqualTo("1h");
        assertThat(child.value("policies")).isEqualTo("no");
    }

    @Test
    void udpEncapIsSaidToCharon() {
        IpsecPlanner encap = new IpsecPlanner(Leases.lease("10.244.1.0/24", "192.0.2.1"), ESP, true);
        assertThat(encap.plan(Leases.lease("10.244.2.0/24", "192.0.2.2")).conn().value("encap")).isEqualTo("true");
    }

    @Test
    void threePoliciesTunnelBetweenThePublicIps() throws Exception {
        IpsecPeer p = planner.plan(Leases.lease("10.244.2.0/24", "192.0.2.2"));
        InetAddress us = InetAddress.getByName("192.0.2.1");
        InetAddress them = InetAddress.getByName("192.0.2.2");
        IpPrefix ours = IpPrefix.parse("10.244.1.0/24");
        IpPrefix theirs = IpPrefix.parse("10.244.2.0/24");
        assertThat(p.policies()).containsExactly(
                new XfrmPolicy(ours, theirs, XfrmPolicy.Dir.OUT, 0, List.of(new XfrmPolicy.Tmpl(us, them, 50, 1, 11))),
                new XfrmPolicy(theirs, ours, XfrmPolicy.Dir.IN, 0, List.of(new XfrmPolicy.Tmpl(them, us, 50, 1, 11))),
                new XfrmPolicy(theirs, ours, XfrmPolicy.Dir.FWD, 0, List.of(new XfrmPolicy.Tmpl(them, us, 50, 1, 11))));
        assertThat(p.policies()).allMatch(IpsecKernel::ours);
    }

    @Test
    void mtuIsTheInterfacesLess77AndLess8MoreWithUdpEncap() {
        assertThat(IpsecPlanner.mtu(1500, false)).isEqualTo(1423);
        assertThat(IpsecPlanner.mtu(1500, true)).isEqualTo(1415);
    }

    @Test
    void aLeaseWithoutPublicIpv4IsRefusedNamingIt() {
        assertThatThrownBy(() -> new IpsecPlanner(new org.jflannel.core.Lease(null, org.jflannel.core.Ip6Net.parse("fd00::/64"),
                new org.jflannel.core.LeaseAttrs(null, null, "ipsec", null, null), null), ESP, false))
                .hasMessageContaining("ipsec needs an IPv4 lease with a public IPv4");
    }
}
