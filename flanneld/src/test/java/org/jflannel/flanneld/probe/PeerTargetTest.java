package org.jflannel.flanneld.probe;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.Inet4Address;
import java.net.InetAddress;
import org.jflannel.core.Ip4Net;
import org.jflannel.core.Lease;
import org.jflannel.core.LeaseAttrs;
import org.junit.jupiter.api.Test;

class PeerTargetTest {

    private static Lease lease(String subnet) throws Exception {
        return new Lease(Ip4Net.parse(subnet), null, new LeaseAttrs((Inet4Address) InetAddress.getByName("192.0.2.12"),
                null, "vxlan", "{\"VNI\":1,\"VtepMAC\":\"0e:00:00:00:00:0c\"}", null), null);
    }

    @Test
    void overlayProbesGoToTheSubnetAddressOnVxlanAndUdp() throws Exception {
        PeerTarget t = PeerTarget.of(lease("10.244.3.0/24")).orElseThrow();
        assertThat(t.overlay().getHostAddress()).isEqualTo("10.244.3.0");
        assertThat(t.underlay().getHostAddress()).isEqualTo("192.0.2.12");
        assertThat(t.vtepMac()).hasToString("0e:00:00:00:00:0c");
    }

    @Test
    void onHostGwTheyGoToThePeersCni0Address() throws Exception {
        assertThat(PeerTarget.of(lease("10.244.3.0/24"), true).orElseThrow().overlay().getHostAddress())
                .isEqualTo("10.244.3.1");
        assertThat(PeerTarget.of(lease("10.244.3.0/30"), true)).isPresent();
        assertThat(PeerTarget.of(lease("10.244.3.0/31"), true)).as("no host address to probe").isEmpty();
    }

    @Test
    void hostGwSettingsHaveNoVxlanDevice() {
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> new ProbeSettings(java.time.Duration.ofSeconds(10),
                java.time.Duration.ofSeconds(1), 1500, "flannel.1", true)).hasMessageContaining("host-gw");
    }
}
