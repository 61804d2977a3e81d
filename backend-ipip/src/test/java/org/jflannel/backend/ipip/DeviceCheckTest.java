package org.jflannel.backend.ipip;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.Inet4Address;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.netlink.IptunInfo;
import org.jflannel.linuxnet.netlink.Link;
import org.junit.jupiter.api.Test;

class DeviceCheckTest {
    static final Inet4Address LOCAL = Leases.ip4("192.0.2.1");

    private static Link ipip(IptunInfo t) {
        return new Link(9, "flannel.ipip", "ipip", 1480, null, true, 1, null, t);
    }

    private static IptunInfo tun(String local, String remote, boolean external, int encap) {
        return new IptunInfo(local == null ? null : Leases.ip4(local), remote == null ? null : Leases.ip4(remote), 0, 0, 0,
                false, 4, encap, external);
    }

    @Test
    void ourOwnDeviceIsAdopted() {
        assertThat(DeviceCheck.incompatibility(ipip(tun("192.0.2.1", null, false, 0)), LOCAL)).isEmpty();
        assertThat(DeviceCheck.incompatibility(ipip(tun("192.0.2.1", "0.0.0.0", false, 0)), LOCAL)).isEmpty();
    }

    @Test
    void anotherLocalOrARemoteIsRecreatedNamingThemAsUpstream() {
        assertThat(DeviceCheck.incompatibility(ipip(tun("192.0.2.7", null, false, 0)), LOCAL)).contains("local=192.0.2.7 remote=<nil>");
        assertThat(DeviceCheck.incompatibility(ipip(tun(null, null, false, 0)), LOCAL)).contains("local=<nil> remote=<nil>");
        assertThat(DeviceCheck.incompatibility(ipip(tun("192.0.2.1", "198.51.100.1", false, 0)), LOCAL))
                .contains("local=192.0.2.1 remote=198.51.100.1");
    }

    @Test
    void externalModeOrAnEncapsulationIsRecreated() {
        assertThat(DeviceCheck.incompatibility(ipip(tun("192.0.2.1", null, true, 0)), LOCAL)).isPresent();
        assertThat(DeviceCheck.incompatibility(ipip(tun("192.0.2.1", null, false, 1)), LOCAL)).contains("encap type 1");
    }

    @Test
    void aNonIpipDeviceIsNotIpipAndUpstreamsMessageSaysToRemoveIt() {
        assertThat(DeviceCheck.isIpip(new Link(9, "flannel.ipip", "dummy", 1500, null, true, 1, null))).isFalse();
        assertThat(DeviceCheck.NOT_IPIP).isEqualTo("flannel.ipip isn't an ipip mode device, please remove device and try again");
    }

    @Test
    void aKernelWithoutIpipIsToldApartAndNamed() {
        NetlinkException unknownKind = new NetlinkException("RTM_NEWLINK", "flannel.ipip type ipip", 95, "Unknown device type");
        assertThat(KernelFeature.missing(unknownKind)).isTrue();
        assertThat(KernelFeature.missing(new NetlinkException("RTM_NEWLINK", "x", 17, ""))).isFalse();
        assertThat(KernelFeature.missing(new NetlinkException("RTM_NEWROUTE", "x", 95, ""))).isFalse();
        assertThat(KernelFeature.message(unknownKind)).contains("kernel module ipip").contains("Unknown device type");
    }
}
