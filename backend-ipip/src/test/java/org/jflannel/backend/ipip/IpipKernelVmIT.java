package org.jflannel.backend.ipip;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.jflannel.testsupport.vm.KernelVm;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The ipip backend against a real kernel's ipip, which this project's machines lack: {@link IpipKernelInVm}
 * run in Debian 12's kernel under qemu ({@link KernelVm}).
 */
@Tag("netns")
class IpipKernelVmIT {

    @Test
    void ipipRunsAgainstDebiansKernel() throws Exception {
        KernelVm.Result r = KernelVm.run(Duration.ofMinutes(15), IpipKernelInVm.class);
        assertThat(r.ended()).as("the VM run ended within its bound").isTrue();
        assertThat(r.summary()).as("every test in the VM passed").isEqualTo("vm tests: found=10 succeeded=10 failed=0");
        assertThat(r.exit()).isZero();
    }
}
