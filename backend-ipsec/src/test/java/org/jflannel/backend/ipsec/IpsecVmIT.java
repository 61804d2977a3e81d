package org.jflannel.backend.ipsec;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.jflannel.testsupport.vm.KernelVm;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The data path over real ESP, which this project's machines lack: {@link IpsecInVm} in Debian 12's kernel under qemu. */
@Tag("netns")
class IpsecVmIT {

    @Test
    void twoNodesPingOverIpsecInDebiansKernel() throws Exception {
        KernelVm.Result r = KernelVm.run(Duration.ofMinutes(20), IpsecInVm.class);
        assertThat(r.ended()).as("the VM run ended within its bound").isTrue();
        assertThat(r.summary()).as("every test in the VM passed").isEqualTo("vm tests: found=2 succeeded=2 failed=0");
        assertThat(r.exit()).isZero();
    }
}
