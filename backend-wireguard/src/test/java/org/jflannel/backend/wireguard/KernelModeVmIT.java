package org.jflannel.backend.wireguard;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.jflannel.testsupport.vm.KernelVm;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Kernel mode against a real kernel WireGuard, which this project's machines lack: {@link KernelModeInVm}
 * run in Debian 12's kernel under qemu ({@link KernelVm}).
 */
@Tag("netns")
class KernelModeVmIT {

    @Test
    void kernelModeRunsAgainstDebiansKernelWireguard() throws Exception {
        KernelVm.Result r = KernelVm.run(Duration.ofMinutes(15), KernelModeInVm.class);
        assertThat(r.ended()).as("the VM run ended within its bound").isTrue();
        assertThat(r.summary()).as("every test in the VM passed").isEqualTo("vm tests: found=3 succeeded=3 failed=0");
        assertThat(r.exit()).isZero();
    }
}
