package org.jflannel.backend.wireguard;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.jflannel.linuxnet.netlink.WireguardDeviceState;
import org.junit.jupiter.api.Test;

/** Which leftover device of our name a new run adopts (its sessions carry on) and which it makes anew, and why. */
class KernelDeviceTest {
    private static final String OURS = "HIgo9xNzJMWLKASShiTqIybxZ0U3wGLiUeJ1PKf8ykw=";
    private static final String OTHER = "xTIBA5rboUvnH4htodjb6e697QjLERt1NAB4mZqp8Dg=";

    private static WireguardDeviceState state(String publicKey, int port) {
        return new WireguardDeviceState("flannel-wg", 7, port, publicKey, List.of());
    }

    @Test
    void aWireguardDeviceWithOurKeyOnOurPortIsAdopted() {
        assertThat(KernelDevice.adoptable("wireguard", state(OURS, 51820), OURS, 51820)).isNull();
    }

    @Test
    void anythingElseIsMadeAnewWithTheReasonSaid() {
        assertThat(KernelDevice.adoptable("vxlan", null, OURS, 51820)).isEqualTo("not a wireguard device");
        assertThat(KernelDevice.adoptable("wireguard", state(OTHER, 51820), OURS, 51820)).isEqualTo("another key");
        assertThat(KernelDevice.adoptable("wireguard", state(null, 51820), OURS, 51820)).as("no private key set").isEqualTo("another key");
        assertThat(KernelDevice.adoptable("wireguard", state(OURS, 51830), OURS, 51820)).isEqualTo("listen port 51830, ours 51820");
    }
}
