package org.jflannel.flanneld.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.jflannel.flanneld.health.Metrics;
import org.jflannel.flanneld.testing.ThrowawayNs;
import org.jflannel.linuxnet.netlink.IpPrefix;
import org.jflannel.linuxnet.netlink.RtNetlink;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** --ip-blackhole-route against the kernel of a throwaway namespace. */
@Tag("netns")
class BlackholeRoutesIT {

    @Test
    void addsMissingBlackholeRoutesOnceAndNeverReplacesAnotherRoute() throws Exception {
        try (ThrowawayNs ns = ThrowawayNs.create("fdbh")) {
            ns.exec("ip", "link", "add", "v0", "type", "veth", "peer", "name", "v0p");
            ns.exec("ip", "link", "set", "v0p", "up");
            ns.exec("ip", "link", "set", "v0", "up");
            ns.exec("ip", "route", "add", "10.244.9.0/24", "dev", "v0"); // someone else's route to that subnet
            try (BlackholeRoutes routes = new BlackholeRoutes(List.of(IpPrefix.parse("10.244.1.0/24"),
                    IpPrefix.parse("2001:db8:1::/64"), IpPrefix.parse("10.244.9.0/24")), new Metrics())) {
                int[] added = ns.netns().call(() -> {
                    try (RtNetlink nl = RtNetlink.open()) {
                        return new int[] {routes.ensure(nl), routes.ensure(nl)};
                    }
                });
                assertThat(added).containsExactly(2, 0);
            }
            assertThat(ns.exec("ip", "route", "show", "type", "blackhole")).contains("blackhole 10.244.1.0/24")
                    .doesNotContain("10.244.9.0");
            assertThat(ns.exec("ip", "-6", "route", "show", "type", "blackhole")).contains("blackhole 2001:db8:1::/64");
            assertThat(ns.exec("ip", "route", "show", "10.244.9.0/24")).contains("dev v0");
        }
    }
}
