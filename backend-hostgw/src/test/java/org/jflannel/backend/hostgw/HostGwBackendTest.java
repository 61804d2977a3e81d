package org.jflannel.backend.hostgw;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.Inet4Address;
import java.net.Inet6Address;
import org.jflannel.core.ExternalInterface;
import org.junit.jupiter.api.Test;

class HostGwBackendTest {
    static final Inet4Address IFACE = (Inet4Address) Leases.ip("192.0.2.11");
    static final Inet6Address IFACE6 = (Inet6Address) Leases.ip("2001:db8:1::11");

    @Test
    void publicIpOtherThanTheInterfaceAddressIsRefusedWithUpstreamsMessage() {
        ExternalInterface nat = new ExternalInterface("eth0", 2, 1500, IFACE, null, (Inet4Address) Leases.ip("203.0.113.5"), null);

        assertThatThrownBy(() -> new HostGwBackend(nat, Runnable::run)).isInstanceOf(IllegalArgumentException.class)
                .hasMessage("your PublicIP differs from interface IP, meaning that probably you're on a NAT, "
                        + "which is not supported by host-gw backend");
    }

    @Test
    void publicIpv6OtherThanTheInterfaceAddressIsRefusedToo() {
        ExternalInterface nat = new ExternalInterface("eth0", 2, 1500, IFACE, IFACE6, null, (Inet6Address) Leases.ip("2001:db8:9::5"));

        assertThat(HostGwBackend.natRefusal(nat)).contains(HostGwBackend.NAT_REFUSED);
    }

    @Test
    void publicIpThatIsTheInterfaceAddressIsAccepted() {
        assertThat(HostGwBackend.natRefusal(new ExternalInterface("eth0", 2, 1500, IFACE, IFACE6, IFACE, IFACE6))).isEmpty();
        assertThat(HostGwBackend.natRefusal(new ExternalInterface("eth0", 2, 1500, IFACE, null, null, null))).isEmpty();
    }
}
