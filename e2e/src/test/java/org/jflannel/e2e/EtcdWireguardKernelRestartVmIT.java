package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.jflannel.testsupport.vm.KernelVm;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Issue 40 in kernel mode: a node of our daemons restarted on the kernel's WireGuard with its device gone (as after a
 * reboot) or under a new key is reached again within a bound under the peer's own timers, and after SIGTERM or SIGKILL
 * its device, left to the kernel, is adopted with no outage for the pods, and deleted by a start under another backend
 * ({@link EtcdWireguardKernelRestartInVm}), in Debian 12's
 * kernel under qemu: this host's kernel has no WireGuard. The figures are the lines {@code restart figure ...}.
 */
@Tag("e2e")
class EtcdWireguardKernelRestartVmIT {

    @Test
    void aRestartedKernelModeNodeIsReachedAgainWithinTheBound() throws Exception {
        KernelVm.Result r = KernelVm.run(Duration.ofMinutes(25), EtcdWireguardKernelRestartInVm.class);
        r.output().lines().filter(l -> l.startsWith("restart figure ")).forEach(l -> System.out.println("VM: " + l));
        assertThat(r.ended()).as("the VM run ended within its bound").isTrue();
        assertThat(r.summary()).as("every test in the VM passed").isEqualTo("vm tests: found=7 succeeded=7 failed=0");
        assertThat(r.exit()).isZero();
    }
}
