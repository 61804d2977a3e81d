package org.jflannel.linuxnet.netlink;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.util.List;
import org.jflannel.linuxnet.TestNs;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * XFRM policies against this kernel in a throwaway namespace (policies need no ESP module), with
 * iproute2's {@code ip xfrm policy} as the independent witness both ways.
 */
@Tag("netns")
class XfrmNetlinkIT {
    private TestNs t;

    @BeforeEach
    void namespace() throws Exception {
        t = TestNs.create("xfrm");
    }

    @AfterEach
    void cleanup() throws Exception {
        t.close();
    }

    private static XfrmPolicy policy(String src, String dst, XfrmPolicy.Dir dir, String tsrc, String tdst) throws Exception {
        return new XfrmPolicy(IpPrefix.parse(src), IpPrefix.parse(dst), dir, 0,
                List.of(XfrmPolicy.Tmpl.espTunnel(InetAddress.getByName(tsrc), InetAddress.getByName(tdst), 11)));
    }

    @Test
    void replacedPoliciesAreWhatIpXfrmShowsAndDeleteRemovesThem() throws Exception {
        XfrmPolicy out = policy("10.244.1.0/24", "10.244.2.0/24", XfrmPolicy.Dir.OUT, "192.0.2.1", "192.0.2.2");
        XfrmPolicy in = policy("10.244.2.0/24", "10.244.1.0/24", XfrmPolicy.Dir.IN, "192.0.2.2", "192.0.2.1");
        XfrmPolicy fwd = policy("10.244.2.0/24", "10.244.1.0/24", XfrmPolicy.Dir.FWD, "192.0.2.2", "192.0.2.1");
        t.ns.run(() -> {
            try (XfrmNetlink x = XfrmNetlink.open()) {
                for (XfrmPolicy p : List.of(out, in, fwd)) {
                    x.replacePolicy(p);
                    x.replacePolicy(p); // idempotent
                }
                assertThat(x.policies()).containsExactlyInAnyOrder(out, in, fwd);
            }
        });
        String shown = t.exec("ip", "xfrm", "policy", "list", "dir", "out");
        assertThat(shown).contains("src 10.244.1.0/24 dst 10.244.2.0/24", "dir out priority 0",
                "tmpl src 192.0.2.1 dst 192.0.2.2", "proto esp reqid 11 mode tunnel");
        t.ns.run(() -> {
            try (XfrmNetlink x = XfrmNetlink.open()) {
                assertThat(x.deletePolicy(out)).isTrue();
                assertThat(x.deletePolicy(out)).as("already gone: quiet").isFalse();
                assertThat(x.policies()).containsExactlyInAnyOrder(in, fwd);
                x.deletePolicy(in);
                x.deletePolicy(fwd);
                assertThat(x.policies()).isEmpty();
            }
        });
        assertThat(t.exec("ip", "xfrm", "policy", "list")).isBlank();
    }

    @Test
    void policiesAddedByIpXfrmAreReadBackIpv4AndIpv6() throws Exception {
        t.exec("ip", "xfrm", "policy", "add", "src", "10.244.3.0/24", "dst", "10.244.1.0/24", "dir", "in",
                "priority", "5", "tmpl", "src", "192.0.2.3", "dst", "192.0.2.1", "proto", "esp", "mode", "tunnel", "reqid", "11");
        t.exec("ip", "xfrm", "policy", "add", "src", "fd00:1::/64", "dst", "fd00:3::/64", "dir", "out",
                "tmpl", "src", "2001:db8::1", "dst", "2001:db8::3", "proto", "esp", "mode", "tunnel", "reqid", "11");
        List<XfrmPolicy> seen = t.ns.call(() -> {
            try (XfrmNetlink x = XfrmNetlink.open()) {
                return x.policies();
            }
        });
        XfrmPolicy v4 = new XfrmPolicy(IpPrefix.parse("10.244.3.0/24"), IpPrefix.parse("10.244.1.0/24"), XfrmPolicy.Dir.IN, 5,
                List.of(XfrmPolicy.Tmpl.espTunnel(InetAddress.getByName("192.0.2.3"), InetAddress.getByName("192.0.2.1"), 11)));
        assertThat(seen).containsExactlyInAnyOrder(v4,
                policy("fd00:1::/64", "fd00:3::/64", XfrmPolicy.Dir.OUT, "2001:db8::1", "2001:db8::3"));
    }
}
