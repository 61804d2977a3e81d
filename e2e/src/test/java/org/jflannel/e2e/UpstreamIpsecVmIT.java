package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.jflannel.testsupport.cluster.UpstreamFlannel;
import org.jflannel.testsupport.vm.KernelVm;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The mixed ipsec clusters with the real upstream flanneld v0.20.2 in Debian 12's kernel under qemu: ESP
 * ({@link UpstreamIpsecClusterInVm}) and ESP in UDP ({@link UpstreamIpsecUdpEncapClusterInVm}). Skipped, saying so,
 * without JFLANNEL_UPSTREAM_DIR.
 */
@Tag("e2e")
class UpstreamIpsecVmIT {

    @Test
    void upstreamsIpsecNodeBesideOurs() throws Exception {
        UpstreamFlannel.flanneld(); // skipped before the VM boots when JFLANNEL_UPSTREAM_DIR does not provide it
        KernelVm.Result r = KernelVm.run(Duration.ofMinutes(25), UpstreamIpsecClusterInVm.class);
        assertThat(r.ended()).as("the VM run ended within its bound").isTrue();
        assertThat(r.summary()).as("every test in the VM passed").isEqualTo("vm tests: found=1 succeeded=1 failed=0");
        assertThat(r.exit()).isZero();
    }

    @Test
    void upstreamsIpsecNodeBesideOursWithUdpEncap() throws Exception {
        UpstreamFlannel.flanneld(); // skipped before the VM boots when JFLANNEL_UPSTREAM_DIR does not provide it
        KernelVm.Result r = KernelVm.run(Duration.ofMinutes(25), UpstreamIpsecUdpEncapClusterInVm.class);
        assertThat(r.ended()).as("the VM run ended within its bound").isTrue();
        assertThat(r.summary()).as("every test in the VM passed").isEqualTo("vm tests: found=1 succeeded=1 failed=0");
        assertThat(r.exit()).isZero();
    }
}
