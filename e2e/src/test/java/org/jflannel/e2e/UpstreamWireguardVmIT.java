package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.jflannel.testsupport.cluster.UpstreamFlannel;
import org.jflannel.testsupport.vm.KernelVm;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Mixed wireguard clusters with the real upstream flanneld v0.20.2, whose wireguard backend needs the
 * kernel's WireGuard, which this project's machines lack: run in Debian 12's kernel under qemu
 * ({@link KernelVm}). Upstream's node beside ours in kernel mode ({@link UpstreamWireguardClusterInVm}),
 * beside ours running WireGuard in userspace ({@link UpstreamWireguardUserspaceClusterInVm}), and in dual
 * stack beside ours in kernel mode ({@link UpstreamWireguardDualStackClusterInVm}).
 */
@Tag("e2e")
class UpstreamWireguardVmIT {

    @Test
    void upstreamsKernelWireguardBesideOursInKernelAndInUserspaceAndInDualStack() throws Exception {
        UpstreamFlannel.flanneld(); // skipped before the VM boots when JFLANNEL_UPSTREAM_DIR does not provide it
        KernelVm.Result r = KernelVm.run(Duration.ofMinutes(25), UpstreamWireguardClusterInVm.class,
                UpstreamWireguardUserspaceClusterInVm.class, UpstreamWireguardDualStackClusterInVm.class);
        assertThat(r.ended()).as("the VM run ended within its bound").isTrue();
        assertThat(r.summary()).as("every test in the VM passed").isEqualTo("vm tests: found=11 succeeded=11 failed=0");
        assertThat(r.exit()).isZero();
    }
}
