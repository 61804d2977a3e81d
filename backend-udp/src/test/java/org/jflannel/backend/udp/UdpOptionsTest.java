package org.jflannel.backend.udp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.jflannel.core.ConfigException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class UdpOptionsTest {

    @Test
    void nothingSetMeansTheUserspaceFastPathWithoutHandoffOrKernelDatapath() throws Exception {
        UdpOptions o = UdpOptions.fromEnvironment(Map.of());
        assertThat(o).isEqualTo(new UdpOptions(true, true, true, UdpOptions.defaultQueues(), false, false, false));
        assertThat(o).isEqualTo(UdpOptions.defaults());
        assertThat(o.kernel()).as("the kernel datapath is opt-in").isFalse();
        assertThat(UdpOptions.fromEnvironment(Map.of("JFLANNEL_UDP_KERNEL", "1"))).isEqualTo(UdpOptions.withKernel());
        assertThat(o.queues()).isBetween(1, 4);
    }

    @Test
    void eachSwitchIsReadFromItsVariable() throws Exception {
        UdpOptions o = UdpOptions.fromEnvironment(Map.of("JFLANNEL_UDP_OFFLOAD", "off", "JFLANNEL_UDP_GRO", "0",
                "JFLANNEL_UDP_COALESCE", "false", "JFLANNEL_UDP_QUEUES", "3", "JFLANNEL_UDP_TX_HANDOFF", "on", "JFLANNEL_UDP_VERIFY_CSUM", "yes",
                "JFLANNEL_UDP_KERNEL", "off"));
        assertThat(o).isEqualTo(new UdpOptions(false, false, false, 3, true, true, false));
    }

    @ParameterizedTest(name = "{0}={1}")
    @CsvSource({"JFLANNEL_UDP_GRO, maybe", "JFLANNEL_UDP_KERNEL, bpf", "JFLANNEL_UDP_VERIFY_CSUM, sometimes", "JFLANNEL_UDP_QUEUES, 0", "JFLANNEL_UDP_QUEUES, 17", "JFLANNEL_UDP_QUEUES, two"})
    void aBadValueIsRefusedNamingTheVariable(String name, String value) {
        assertThatThrownBy(() -> UdpOptions.fromEnvironment(Map.of(name, value)))
                .isInstanceOfSatisfying(ConfigException.class, e -> assertThat(e.field()).isEqualTo(name))
                .hasMessageContaining(value);
    }
}
