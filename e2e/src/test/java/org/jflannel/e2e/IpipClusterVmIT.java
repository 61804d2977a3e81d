package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.jflannel.testsupport.cluster.UpstreamFlannel;
import org.jflannel.testsupport.vm.KernelVm;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * ipip clusters, which need the kernel's ipip this project's machines lack: run in Debian 12's kernel
 * under qemu ({@link KernelVm}). Ours on three nodes ({@link EtcdIpipClusterInVm}), and upstream flanneld
 * v0.20.2 on node 2 beside ours ({@link UpstreamIpipClusterInVm}; skipped without JFLANNEL_UPSTREAM_DIR).
 */
@Tag("e2e")
class IpipClusterVmIT {

    @Test
    void threeNodesOfOursOverIpip() throws Exception {
        KernelVm.Result r = KernelVm.run(Duration.ofMinutes(20), EtcdIpipClusterInVm.class);
        assertThat(r.ended()).as("the VM run ended within its bound").isTrue();
        assertThat(r.summary()).as("every test in the VM passed").isEqualTo("vm tests: found=6 succeeded=6 failed=0");
        assertThat(r.exit()).isZero();
    }

    @Test
    void upstreamsIpipNodeBesideOurs() throws Exception {
        UpstreamFlannel.flanneld(); // skipped before the VM boots when JFLANNEL_UPSTREAM_DIR does not provide it
        KernelVm.Result r = KernelVm.run(Duration.ofMinutes(20), UpstreamIpipClusterInVm.class);
        assertThat(r.ended()).as("the VM run ended within its bound").isTrue();
        assertThat(r.summary()).as("every test in the VM passed").isEqualTo("vm tests: found=4 succeeded=4 failed=0");
        assertThat(r.exit()).isZero();
    }
}
