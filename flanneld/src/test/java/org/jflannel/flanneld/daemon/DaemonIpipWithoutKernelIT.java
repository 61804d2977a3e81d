package org.jflannel.flanneld.daemon;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.jflannel.flanneld.testing.DaemonProcess;
import org.jflannel.flanneld.testing.NsEtcd;
import org.jflannel.flanneld.testing.ThrowawayNs;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The daemon on the ipip backend where the kernel has no ipip (this project's machines): exit 1 with
 * the kernel feature named, no subnet.env, no device left. Skipped, saying so, on a kernel with ipip.
 */
@Tag("netns")
@Tag("etcd")
class DaemonIpipWithoutKernelIT {
    static final Duration EXIT = Duration.ofSeconds(60);

    @Test
    void ipipWithoutTheKernelModuleExits1NamingIt(@TempDir Path dir) throws Exception {
        assumeTrue(!Files.exists(Path.of("/sys/module/ipip")), "this kernel has ipip (IpipKernelVmIT covers it)");
        try (ThrowawayNs ns = ThrowawayNs.node("fdi"); NsEtcd etcd = NsEtcd.start(ns)) {
            etcd.put("/coreos.com/network/config", "{\"Network\": \"10.244.0.0/16\", \"Backend\": {\"Type\": \"ipip\"}}");
            try (DaemonProcess d = DaemonProcess.start(ns.execPrefix(), Map.of(), "--etcd-endpoints=" + NsEtcd.ENDPOINT,
                    "--subnet-file=" + dir.resolve("subnet.env"))) {
                assertThat(d.waitFor(EXIT)).as("%s", d.stderr()).isEqualTo(1);
                assertThat(d.stderr()).contains("Error registering network: RTM_NEWLINK flannel.ipip type ipip: EOPNOTSUPP")
                        .contains("load kernel module ipip");
            }
            assertThat(dir.resolve("subnet.env")).doesNotExist();
            assertThat(ns.tryExec("ip", "link", "show", "flannel.ipip").status()).as("no device left").isNotZero();
        }
    }
}
