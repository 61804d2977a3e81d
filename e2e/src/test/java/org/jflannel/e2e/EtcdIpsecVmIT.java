package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.jflannel.testsupport.vm.KernelVm;
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
    void kubeModeAndDaemonRestartsOverIpsecInDebiansKernel() throws Exception {
        KernelVm.Result r = KernelVm.run(Duration.ofMinutes(35), KubeIpsecClusterInVm.class);
        assertThat(r.ended()).as("the VM run ended within its bound").isTrue();
        assertThat(r.summary()).as("every test in the VM passed").isEqualTo("vm tests: found=3 succeeded=3 failed=0");
        assertThat(r.exit()).isZero();
    }
}
