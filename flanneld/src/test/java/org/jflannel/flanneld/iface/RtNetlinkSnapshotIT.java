package org.jflannel.flanneld.iface;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.jflannel.core.ExternalInterface;
import org.jflannel.flanneld.testing.ThrowawayNs;
import org.jflannel.linuxnet.netlink.RtNetlink;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** Interface selection over what the kernel of a throwaway namespace reports. */
@Tag("netns")
class RtNetlinkSnapshotIT {

    @Test
    void defaultRouteInterfaceAndCanReachComeFromTheKernel() throws Exception {
        try (ThrowawayNs ns = ThrowawayNs.create("fdif")) {
            // veth pairs (this kernel has no dummy module); both ends up so the links have carrier
            ns.exec("ip", "link", "add", "ext0", "mtu", "1400", "type", "veth", "peer", "name", "ext0p");
            ns.exec("ip", "link", "add", "other0", "type", "veth", "peer", "name", "other0p");
            ns.exec("ip", "link", "set", "ext0p", "up");
            ns.exec("ip", "link", "set", "other0p", "up");
            ns.exec("ip", "addr", "add", "192.0.2.10/24", "dev", "ext0");
            ns.exec("ip", "addr", "add", "192.0.2.11/24", "dev", "ext0"); // secondary: never preferred
            ns.exec("ip", "-6", "addr", "add", "2001:db8::10/64", "dev", "ext0", "nodad");
            ns.exec("ip", "addr", "add", "198.51.100.5/24", "dev", "other0");
            ns.exec("ip", "link", "set", "ext0", "up");
            ns.exec("ip", "link", "set", "other0", "up");
            ns.exec("ip", "route", "add", "default", "via", "192.0.2.1");
            ns.exec("ip", "-6", "route", "add", "default", "via", "2001:db8::1", "dev", "ext0");

            ExternalInterface chosen = ns.netns().call(() -> {
                try (RtNetlink nl = RtNetlink.open()) {
                    return new InterfaceSelector(RtNetlinkSnapshot.read(nl), ip -> RtNetlinkSnapshot.routeGet(nl, ip))
                            .select(new InterfaceSelector.Request(List.of(), List.of(), "", "", "", true, true));
                }
            });
            assertThat(chosen.name()).isEqualTo("ext0");
            assertThat(chosen.mtu()).isEqualTo(1400);
            assertThat(IpLiteral.format(chosen.address())).isEqualTo("192.0.2.10");
            assertThat(IpLiteral.format(chosen.address6())).isEqualTo("2001:db8::10");
            assertThat(chosen.publicIp()).isEqualTo(chosen.address());

            ExternalInterface reach = ns.netns().call(() -> {
                try (RtNetlink nl = RtNetlink.open()) {
                    return new InterfaceSelector(RtNetlinkSnapshot.read(nl), ip -> RtNetlinkSnapshot.routeGet(nl, ip))
                            .select(new InterfaceSelector.Request(List.of("nope"), List.of(), "198.51.100.77", "", "", true, false));
                }
            });
            assertThat(reach.name()).isEqualTo("other0");
            assertThat(IpLiteral.format(reach.address())).isEqualTo("198.51.100.5");
        }
    }
}
