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
    void nothingSetMeansTheFastPathWithTheKernelEncapsulatingAndDecapsulatingThroughVxlanGpe() throws Exception {
        UdpOptions o = UdpOptions.fromEnvironment(Map.of());
        assertThat(o).isEqualTo(new UdpOptions(true, true, true, UdpOptions.defaultQueues(), false, false, true, false, true));
        assertThat(o).isEqualTo(UdpOptions.shipped()).isEqualTo(UdpOptions.withKernelGpe());
        assertThat(o.kernel()).isTrue();
        assertThat(o.kernelDecap()).isFalse();
        assertThat(o.kernelGpe()).isTrue();
        assertThat(o.toString()).endsWith("kernel=gpe");
        assertThat(o.queues()).isBetween(1, 4);
    }

    @ParameterizedTest(name = "JFLANNEL_UDP_KERNEL={0}")
    @CsvSource({"1, true, true, false", "full, true, true, false", "on, true, true, false", "encap, true, false, false",
            "GPE, true, false, true", "0, false, false, false", "off, false, false, false"})
    void theKernelDatapathsModeIsReadFromItsVariable(String value, boolean kernel, boolean decap, boolean gpe) throws Exception {
        UdpOptions o = UdpOptions.fromEnvironment(Map.of("JFLANNEL_UDP_KERNEL", value));
        assertThat(o.kernel()).isEqualTo(kernel);
        assertThat(o.kernelDecap()).isEqualTo(decap);
        assertThat(o.kernelGpe()).isEqualTo(gpe);
    }

    @Test
    void withoutTheOffloadsTheKernelDoesNotEncapsulateByDefaultAndEncapIsRefused() throws Exception {
        assertThat(UdpOptions.fromEnvironment(Map.of("JFLANNEL_UDP_OFFLOAD", "0")).kernel()).isFalse();
        assertThatThrownBy(() -> UdpOptions.fromEnvironment(Map.of("JFLANNEL_UDP_OFFLOAD", "0", "JFLANNEL_UDP_KERNEL", "encap")))
                .isInstanceOfSatisfying(ConfigException.class, e -> assertThat(e.field()).isEqualTo("JFLANNEL_UDP_KERNEL"))
                .hasMessageContaining("JFLANNEL_UDP_OFFLOAD");
        assertThatThrownBy(() -> UdpOptions.fromEnvironment(Map.of("JFLANNEL_UDP_OFFLOAD", "0", "JFLANNEL_UDP_KERNEL", "gpe")))
                .isInstanceOfSatisfying(ConfigException.class, e -> assertThat(e.field()).isEqualTo("JFLANNEL_UDP_KERNEL"));
        assertThat(UdpOptions.fromEnvironment(Map.of("JFLANNEL_UDP_OFFLOAD", "0", "JFLANNEL_UDP_KERNEL", "full")).kernelDecap()).isTrue();
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
