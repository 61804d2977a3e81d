package org.jflannel.testsupport.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import org.jflannel.testbase.NetnsPrivilege;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The demo's question to the kernel: this project's machines have no ipip, and the answer names the module. */
@Tag("netns")
class KernelFeaturesIT {

    @Test
    void ipipOnAKernelWithoutItNamesTheModuleAndOtherBackendsNeedNothing() throws Exception {
        NetnsPrivilege.require();
        assertThat(KernelFeatures.missingFor("vxlan")).isEmpty();
        assumeTrue(!Files.exists(Path.of("/sys/module/ipip")), "this kernel has ipip");

        assertThat(KernelFeatures.missingFor("ipip")).hasValueSatisfying(m -> assertThat(m)
                .startsWith("--backend ipip: this kernel has no IPv4-in-IPv4 tunnels (kernel module ipip")
                .contains("EOPNOTSUPP"));
    }

    @Test
    void ipsecOnAKernelWithoutEspNamesTheModule() throws Exception {
        NetnsPrivilege.require();
        assumeTrue(!Files.exists(Path.of("/sys/module/esp4")), "this kernel has esp4");
        assumeTrue(Files.isExecutable(Path.of("/usr/lib/ipsec/charon")), "no Debian charon here (bin/setup installs it)");

        assertThat(KernelFeatures.missingFor("ipsec")).hasValueSatisfying(m -> assertThat(m)
                .startsWith("--backend ipsec: this kernel has no ESP with AES-GCM (kernel modules esp4")
                .contains("ip xfrm state add: "));
    }
}
