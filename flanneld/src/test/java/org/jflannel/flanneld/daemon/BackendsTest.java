package org.jflannel.flanneld.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.net.Inet4Address;
import java.net.InetAddress;
import org.jflannel.backend.extension.AllocBackend;
import org.jflannel.backend.extension.ExtensionBackend;
import org.jflannel.backend.hostgw.HostGwBackend;
import org.jflannel.core.ExternalInterface;
import org.junit.jupiter.api.Test;

class BackendsTest {

    static Inet4Address ip(String literal) throws Exception {
        return (Inet4Address) InetAddress.getByName(literal);
    }

    @Test
    void hostGwIsWired() throws Exception {
        ExternalInterface ext = new ExternalInterface("eth0", 2, 1500, ip("192.0.2.11"), null, null, null);

        assertThat(Backends.create("host-gw", ext, null, Runnable::run)).isInstanceOf(HostGwBackend.class);
    }

    @Test
    void allocAndExtensionAreWired() throws Exception {
        ExternalInterface ext = new ExternalInterface("eth0", 2, 1500, ip("192.0.2.11"), null, null, null);

        assertThat(Backends.create("alloc", ext, null, Runnable::run)).isInstanceOf(AllocBackend.class);
        assertThat(Backends.create("extension", ext, null, Runnable::run)).isInstanceOf(ExtensionBackend.class);
    }

    @Test
    void wireguardIsWired() throws Exception {
        ExternalInterface ext = new ExternalInterface("eth0", 2, 1500, ip("192.0.2.11"), null, null, null);

        assertThat(Backends.create("wireguard", ext, null, Runnable::run))
                .isInstanceOf(org.jflannel.backend.wireguard.WireguardBackend.class);
    }

    @Test
    void hostGwBehindNatStopsStartUpWithUpstreamsMessage() throws Exception {
        ExternalInterface nat = new ExternalInterface("eth0", 2, 1500, ip("192.0.2.11"), null, ip("203.0.113.5"), null);

        assertThatThrownBy(() -> Backends.create("host-gw", nat, null, Runnable::run)).isInstanceOf(StartupError.class)
                .hasMessage("Error fetching backend: your PublicIP differs from interface IP, meaning that probably "
                        + "you're on a NAT, which is not supported by host-gw backend");
    }
}
