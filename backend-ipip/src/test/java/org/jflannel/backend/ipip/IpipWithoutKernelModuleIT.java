package org.jflannel.backend.ipip;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * On a kernel without ipip (this project's machines: no {@code ipip} module) registration fails at the
 * device with the kernel feature named, and leaves nothing behind. Where the kernel has ipip the test
 * says so and is skipped ({@link IpipKernelVmIT} covers that kernel).
 */
@Tag("netns")
class IpipWithoutKernelModuleIT {

    @Test
    void registrationFailsNamingTheKernelModule() throws Exception {
        try (IpipNode node = IpipNode.create()) {
            boolean has = node.link("tunl0") != null || Files.exists(Path.of("/sys/module/ipip"));
            assumeTrue(!has, "this kernel has ipip; IpipKernelVmIT covers it");

            assertThatThrownBy(() -> node.register(IpipNode.CONF, "10.244.1.0/24"))
                    .hasMessageContaining("RTM_NEWLINK flannel.ipip type ipip")
                    .hasMessageContaining("EOPNOTSUPP")
                    .hasMessageContaining("kernel module ipip");
            assertThat(node.link("flannel.ipip")).as("no device left").isNull();
        }
    }
}
