package org.jflannel.backend.vxlan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.jflannel.backend.vxlan.Leases.ip;

import java.net.InetAddress;
import java.util.stream.Stream;
import org.jflannel.core.MacAddress;
import org.jflannel.linuxnet.netlink.Link;
import org.jflannel.linuxnet.netlink.VxlanInfo;
import org.jflannel.linuxnet.netlink.VxlanSpec;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class DeviceCheckTest {
    static final MacAddress MAC = MacAddress.parse("0e:00:00:00:00:01");
    static final VxlanSpec WANT = new VxlanSpec("flannel.1", 1, 2, ip("192.0.2.1"), 0, false, false, 1450, MAC);

    /** A device as {@code ip link add flannel.1 type vxlan id 1 local 192.0.2.1 dev <2> nolearning} leaves it. */
    static VxlanInfo info(int vni, int under, String local, String group, int port, boolean learning, boolean gbp, boolean l2miss) {
        InetAddress l = local == null ? null : ip(local);
        InetAddress g = group == null ? null : ip(group);
        return new VxlanInfo(vni, under, l, g, port, learning, gbp, l2miss, false, false, false, 0, 0, false, false);
    }

    static Link link(String kind, int mtu, VxlanInfo v) {
        return new Link(9, "flannel.1", kind, mtu, MacAddress.parse("0e:00:00:00:00:99"), true, 0, v);
    }

    static Stream<Arguments> cases() {
        VxlanInfo same = info(1, 2, "192.0.2.1", null, 8472, false, false, false);
        return Stream.of(
            Arguments.of("identical", link("vxlan", 1450, same), null, false, false),
            Arguments.of("no underlay recorded", link("vxlan", 1450, info(1, 0, "192.0.2.1", null, 8472, false, false, false)), null, false, false),
            Arguments.of("no local recorded", link("vxlan", 1450, info(1, 2, null, null, 8472, false, false, false)), null, false, false),
            Arguments.of("other port while we want the default", link("vxlan", 1450, info(1, 2, "192.0.2.1", null, 4789, false, false, false)), null, false, false),
            Arguments.of("a group is set", link("vxlan", 1450, info(1, 2, "192.0.2.1", "239.1.1.1", 8472, false, false, false)), null, false, false),
            Arguments.of("mtu differs: corrected", link("vxlan", 1500, same), null, true, false),
            Arguments.of("learning differs: corrected", link("vxlan", 1450, info(1, 2, "192.0.2.1", null, 8472, true, false, false)), null, false, true),
            Arguments.of("both differ", link("vxlan", 1400, info(1, 2, "192.0.2.1", null, 8472, true, false, false)), null, true, true),
            Arguments.of("not vxlan", link("dummy", 1450, null), "link type: vxlan vs dummy", false, false),
            Arguments.of("vni", link("vxlan", 1450, info(2, 2, "192.0.2.1", null, 8472, false, false, false)), "vni: 1 vs 2", false, false),
            Arguments.of("underlay", link("vxlan", 1450, info(1, 3, "192.0.2.1", null, 8472, false, false, false)), "vtep (external) interface: 2 vs 3", false, false),
            Arguments.of("local", link("vxlan", 1450, info(1, 2, "192.0.2.9", null, 8472, false, false, false)), "vtep (external) IP: 192.0.2.1 vs 192.0.2.9", false, false),
            Arguments.of("l2miss", link("vxlan", 1450, info(1, 2, "192.0.2.1", null, 8472, false, false, true)), "l2miss: false vs true", false, false),
            Arguments.of("gbp", link("vxlan", 1450, info(1, 2, "192.0.2.1", null, 8472, false, true, false)), "gbp: false vs true", false, false));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void comparesLikeUpstreamAndCorrectsMtuAndLearning(String name, Link have, String incompat, boolean mtu, boolean learning) {
        DeviceCheck c = DeviceCheck.compare(WANT, have);
        assertThat(c.incompatibility()).isEqualTo(incompat);
        assertThat(c.adoptable()).isEqualTo(incompat == null);
        assertThat(c.mtuDiffers()).isEqualTo(mtu);
        assertThat(c.learningDiffers()).isEqualTo(learning);
        assertThat(c.needsCorrection()).isEqualTo(mtu || learning);
    }

    @ParameterizedTest(name = "port {0} vs {1}")
    @org.junit.jupiter.params.provider.CsvSource({"4789,4789,", "4789,8472,port: 4789 vs 8472"})
    void comparesPortOnlyWhenWeSetOne(int want, int have, String incompat) {
        VxlanSpec w = new VxlanSpec("flannel.1", 1, 2, ip("192.0.2.1"), want, false, false, 1450, MAC);
        DeviceCheck c = DeviceCheck.compare(w, link("vxlan", 1450, info(1, 2, "192.0.2.1", null, have, false, false, false)));
        assertThat(c.incompatibility()).isEqualTo(incompat);
    }
}
