package org.jflannel.backend.ipip;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.jflannel.core.BackendConfig;
import org.jflannel.core.ConfigException;
import org.jflannel.core.ExternalInterface;
import org.jflannel.core.LeaseAttrs;
import org.jflannel.core.NetConf;
import org.junit.jupiter.api.Test;

/** Config checks before anything is touched, and the lease the backend asks for. */
class IpipBackendTest {
    static final ExternalInterface EXT = new ExternalInterface("eth0", 2, 1500, Leases.ip4("192.0.2.1"), null, null, null);

    private static NetConf conf(String json) throws ConfigException {
        return NetConf.parse(json, NetConf.Mode.ETCD);
    }

    @Test
    void ipv4ConfigPassesWithItsDirectRouting() throws Exception {
        BackendConfig.Ipip cfg = IpipBackend.check(
                conf("{\"Network\":\"10.244.0.0/16\",\"Backend\":{\"Type\":\"ipip\",\"DirectRouting\":true}}"), EXT);
        assertThat(cfg.directRouting()).isTrue();
    }

    @Test
    void ipv6IsRefusedNamingTheField() {
        assertThatThrownBy(() -> IpipBackend.check(conf("{\"Network\":\"10.244.0.0/16\",\"EnableIPv6\":true,"
                + "\"IPv6Network\":\"fd00:10:244::/56\",\"Backend\":{\"Type\":\"ipip\"}}"), EXT))
                .isInstanceOfSatisfying(ConfigException.class, e -> assertThat(e.field()).isEqualTo("EnableIPv6"))
                .hasMessageContaining("EnableIPv6").hasMessageContaining("IPv4 only");
    }

    @Test
    void ipv6OnlyIsRefusedAsIpv6() {
        assertThatThrownBy(() -> IpipBackend.check(conf("{\"EnableIPv4\":false,\"EnableIPv6\":true,"
                + "\"IPv6Network\":\"fd00:10:244::/56\",\"Backend\":{\"Type\":\"ipip\"}}"), EXT))
                .isInstanceOfSatisfying(ConfigException.class, e -> assertThat(e.field()).isEqualTo("EnableIPv6"));
    }

    @Test
    void anInterfaceWithoutIpv4IsRefused() throws Exception {
        ExternalInterface v6 = new ExternalInterface("eth0", 2, 1500, null,
                (java.net.Inet6Address) Leases.ip("fd00::1"), null, null);
        assertThatThrownBy(() -> IpipBackend.check(conf("{\"Network\":\"10.244.0.0/16\",\"Backend\":{\"Type\":\"ipip\"}}"), v6))
                .hasMessageContaining("has no IPv4 address");
    }

    @Test
    void anotherBackendsConfigIsRefused() {
        assertThatThrownBy(() -> IpipBackend.check(conf("{\"Network\":\"10.244.0.0/16\",\"Backend\":{\"Type\":\"vxlan\"}}"), EXT))
                .isInstanceOfSatisfying(ConfigException.class, e -> assertThat(e.field()).isEqualTo("Backend.Type"));
    }

    @Test
    void leaseCarriesThePublicIpAndTypeIpipWithoutBackendData() {
        ExternalInterface nat = new ExternalInterface("eth0", 2, 1500, Leases.ip4("192.0.2.1"), null, Leases.ip4("203.0.113.9"), null);
        assertThat(IpipBackend.attrs(nat)).isEqualTo(new LeaseAttrs(Leases.ip4("203.0.113.9"), null, "ipip", null, null));
    }

    @Test
    void mtuIsTheInterfacesLessTheOuterHeader() {
        assertThat(EXT.mtu() - IpipBackend.OVERHEAD).isEqualTo(1480);
    }
}
