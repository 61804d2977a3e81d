package org.jflannel.netpol;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.jflannel.testsupport.vm.KernelVm;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** The SCTP cases in Debian 12's kernel under qemu ({@link KernelVm}): this project's machines have no SCTP. */
@Tag("netns")
class SctpPolicyVmIT {
    @Test
    void sctpPoliciesInAKernelWithSctp() throws Exception {
        KernelVm.Result r = KernelVm.run(Duration.ofMinutes(12), SctpInVm.class);
        assertThat(r.ended()).as("the VM run ended within its bound").isTrue();
        assertThat(r.summary()).as("every test in the VM passed").isEqualTo("vm tests: found=1 succeeded=1 failed=0");
        assertThat(r.exit()).isZero();
    }
}
