package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.jflannel.testsupport.vm.KernelVm;
import org.junit.jupiter.api.Disabled;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Our daemons on ipsec carrying pod traffic, in Debian 12's kernel under qemu: ESP is not in this host's kernel.
 * The etcd cluster ({@link EtcdIpsecClusterInVm}); the kube-mode cluster with node 1's daemon restarted after
 * SIGTERM and after SIGKILL while pings run ({@link KubeIpsecClusterInVm}). One VM boot each.
 */
@Tag("e2e")
class EtcdIpsecVmIT {

    @Test
    void ourDaemonsCarryPodTrafficOverIpsecInDebiansKernel() throws Exception {
        KernelVm.Result r = KernelVm.run(Duration.ofMinutes(25), EtcdIpsecClusterInVm.class);
        assertThat(r.ended()).as("the VM run ended within its bound").isTrue();
        assertThat(r.summary()).as("every test in the VM passed").isEqualTo("vm tests: found=1 succeeded=1 failed=0");
        assertThat(r.exit()).isZero();
    }

    @Test
    @Disabled("issue 39, session 21: written, never completed a run (4 attempts at host load 21-25: the stand-in's"
            + " timeouts, fixed; a qemu boot panic; node 1 not ready within 270 s); up to 35 min of TCG: run it by hand"
            + " on a quiet machine (-Dit.test=EtcdIpsecVmIT) before it joins CI")
    void kubeModeAndDaemonRestartsOverIpsecInDebiansKernel() throws Exception {
        KernelVm.Result r = KernelVm.run(Duration.ofMinutes(35), KubeIpsecClusterInVm.class);
        assertThat(r.ended()).as("the VM run ended within its bound").isTrue();
        assertThat(r.summary()).as("every test in the VM passed").isEqualTo("vm tests: found=3 succeeded=3 failed=0");
        assertThat(r.exit()).isZero();
    }
}
