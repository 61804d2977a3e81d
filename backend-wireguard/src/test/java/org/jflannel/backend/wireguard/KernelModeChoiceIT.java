package org.jflannel.backend.wireguard;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Map;
import org.jflannel.backend.wireguard.protocol.Timings;
import org.jflannel.linuxnet.NetlinkException;
import org.jflannel.linuxnet.netlink.WireguardNetlink;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Who runs the devices, on this host's kernel, whichever it is: {@code JFLANNEL_WG_DATAPLANE=kernel}
 * runs the kernel's WireGuard where there is one and otherwise fails before the lease, naming the
 * variable and the kernel's answer, with no device left; the default ({@code auto}) runs the kernel's
 * or, without it, ours in userspace; {@code userspace} always ours. (This project's machines have no
 * WireGuard in the kernel; the kernel side itself is tested in the kernel VM, {@link KernelModeVmIT}.)
 */
@Tag("netns")
class KernelModeChoiceIT {
    private static final String CONF = "{\"Network\":\"10.244.0.0/16\",\"Backend\":{\"Type\":\"wireguard\"}}";

    @TempDir
    Path tmp;

    private static boolean kernelHasWireguard() {
        try {
            WireguardNetlink.open().close();
            return true;
        } catch (NetlinkException e) {
            return false;
        }
    }

    @Test
    void kernelModeRunsTheKernelsOrFailsBeforeTheLease() throws Exception {
        boolean kernel = kernelHasWireguard();
        try (WgNode a = WgNode.create("wkc"); WgNode b = WgNode.create("wkd")) {
            WgNode.join(a, b, "10.244.1.1/24", "10.244.2.1/24");
            Map<String, String> env = Map.of("WIREGUARD_KEY_FILE", tmp.resolve("a").toString(), "JFLANNEL_WG_DATAPLANE", "kernel");
            if (kernel) {
                assertThat(a.register(CONF, "10.244.1.0/24", "ul0", "192.0.2.1", 1500, env, Timings.standard()).kernelMode()).isTrue();
                return;
            }
            assertThatThrownBy(() -> a.register(CONF, "10.244.1.0/24", "ul0", "192.0.2.1", 1500, env, Timings.standard()))
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining("wireguard kernel device flannel-wg: CTRL_CMD_GETFAMILY wireguard: ENOENT")
                    .hasMessageContaining("JFLANNEL_WG_DATAPLANE=kernel");
            assertThat(a.subnets.published()).as("no lease asked for").isNull();
            assertThat(a.execAnyExit("ip", "link", "show", "flannel-wg")).doesNotContain("flannel-wg:");
        }
    }

    @Test
    void autoRunsTheKernelsWhereItIsAndOursElseUserspaceAlwaysOurs() throws Exception {
        boolean kernel = kernelHasWireguard();
        try (WgNode a = WgNode.create("wka"); WgNode b = WgNode.create("wkb")) {
            WgNode.join(a, b, "10.244.1.1/24", "10.244.2.1/24");
            WireguardNetwork na = a.register(CONF, "10.244.1.0/24", "ul0", "192.0.2.1", 1500,
                    Map.of("WIREGUARD_KEY_FILE", tmp.resolve("a").toString()), Timings.standard());
            WireguardNetwork nb = b.register(CONF, "10.244.2.0/24", "ul0", "192.0.2.2", 1500,
                    Map.of("WIREGUARD_KEY_FILE", tmp.resolve("b").toString(), "JFLANNEL_WG_DATAPLANE", "userspace"), Timings.standard());
            assertThat(na.kernelMode()).isEqualTo(kernel);
            assertThat(nb.kernelMode()).isFalse();
            assertThat(a.ip("-d", "link", "show", "flannel-wg")).contains(kernel ? "wireguard" : "tun");
            assertThat(b.ip("-d", "link", "show", "flannel-wg")).contains("tun");
        }
    }
}
