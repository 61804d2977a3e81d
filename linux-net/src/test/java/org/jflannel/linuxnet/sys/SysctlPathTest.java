package org.jflannel.linuxnet.sys;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class SysctlPathTest {

    @Test
    void sysctlKeysCannotEscapeProcSys() {
        assertThat(Sysctl.path("net.ipv4.ip_forward").toString()).isEqualTo("/proc/sys/net/ipv4/ip_forward");
        assertThat(Sysctl.path("net/ipv6/conf/flannel.1/accept_ra").toString())
                .isEqualTo("/proc/sys/net/ipv6/conf/flannel.1/accept_ra");
        assertThatThrownBy(() -> Sysctl.path("net/../../etc/passwd")).isInstanceOf(IllegalArgumentException.class);
    }
}
