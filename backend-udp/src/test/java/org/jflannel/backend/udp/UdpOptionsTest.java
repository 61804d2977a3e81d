package org.jflannel.backend.udp;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.jflannel.core.ConfigException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

class UdpOptionsTest {

    @Test
    void nothingSetMeansTheFastPathWithTheKernelEncapsulatingAndDecapsulatingThroughVxlanGpe() throws Exception {
        UdpOptions o = UdpOptions.fromEnvironment(Map.of());
        assertThat(o).isEqualTo(new UdpOptions(true, true, true, UdpOptions.defaultQueues(), false, false, UdpKernelMode.GPE, GpePath.DEFAULT_PORT));
        assertThat(o).isEqualTo(UdpOptions.shipped()).isEqualTo(UdpOptions.withKernelGpe());
        assertThat(o.kernel()).isEqualTo(UdpKernelMode.GPE);
        assertThat(o.kernelAttachable()).isTrue();
        assertThat(o.toString()).endsWith("kernel=gpe");
        assertThat(o.queues()).isBetween(1, 4);
    }

    @ParameterizedTest(name = "JFLANNEL_UDP_KERNEL={0}")
    @CsvSource(delimiter = '|', value = {"1|FULL", "full|FULL", "FULL|FULL", "on|FULL", "true|FULL", "yes|FULL",
            "encap|ENCAP", "Encap|ENCAP", "gpe|GPE", "GPE|GPE", "' gpe '|GPE",
            "0|OFF", "off|OFF", "false|OFF", "no|OFF", "OFF|OFF"})
    void everySpellingOfTheKernelDatapathsModeIsRead(String value, UdpKernelMode mode) throws Exception {
        UdpOptions o = UdpOptions.fromEnvironment(Map.of("JFLANNEL_UDP_KERNEL", value));
        assertThat(o.kernel()).isEqualTo(mode);
        assertThat(o.toString()).endsWith(" kernel=" + mode.name().toLowerCase(java.util.Locale.ROOT));
        assertThat(o.kernelAttachable()).isEqualTo(mode != UdpKernelMode.OFF);
    }

    @ParameterizedTest(name = "JFLANNEL_UDP_KERNEL=\"{0}\"")
    @ValueSource(strings = {"", " ", "\t"})
    void aBlankModeIsGpe(String value) throws Exception {
        assertThat(UdpOptions.fromEnvironment(Map.of("JFLANNEL_UDP_KERNEL", value)).kernel()).isEqualTo(UdpKernelMode.GPE);
        assertThat(UdpOptions.fromEnvironment(Map.of("JFLANNEL_UDP_KERNEL", value, "JFLANNEL_UDP_OFFLOAD", "0")).kernel())
                .as("without the offloads").isEqualTo(UdpKernelMode.OFF);
    }

    @Test
    void eachModeIsSpelledAsItsVariableTakesIt() throws Exception {
        for (UdpKernelMode m : UdpKernelMode.values()) {
            assertThat(UdpKernelMode.parse(m.toString())).contains(m);
            assertThat(UdpOptions.defaults(m).toString()).endsWith(" kernel=" + m);
        }
        assertThat(UdpOptions.withKernel().kernel()).isEqualTo(UdpKernelMode.FULL);
        assertThat(UdpOptions.withKernelEncap().kernel()).isEqualTo(UdpKernelMode.ENCAP);
        assertThat(UdpOptions.defaults().kernel()).isEqualTo(UdpKernelMode.OFF);
        assertThat(UdpOptions.plain().kernel()).isEqualTo(UdpKernelMode.OFF);
        assertThat(UdpOptions.plain().withKernelMode(UdpKernelMode.FULL)).isEqualTo(
                new UdpOptions(false, false, false, 1, false, false, UdpKernelMode.FULL, GpePath.DEFAULT_PORT));
    }

    @ParameterizedTest(name = "JFLANNEL_UDP_KERNEL={0}")
    @ValueSource(strings = {"encap", "gpe", "GPE"})
    void withoutTheOffloadsEncapAndGpeAreRefusedNamingTheModeGiven(String value) {
        assertThatThrownBy(() -> UdpOptions.fromEnvironment(Map.of("JFLANNEL_UDP_OFFLOAD", "0", "JFLANNEL_UDP_KERNEL", value)))
                .isInstanceOfSatisfying(ConfigException.class, e -> assertThat(e.field()).isEqualTo("JFLANNEL_UDP_KERNEL"))
                .hasMessageContaining("JFLANNEL_UDP_KERNEL=" + value + " needs")
                .hasMessageContaining("JFLANNEL_UDP_OFFLOAD");
    }

    @Test
    void withoutTheOffloadsTheKernelDoesNotEncapsulateByDefaultButFullIsTaken() throws Exception {
        assertThat(UdpOptions.fromEnvironment(Map.of("JFLANNEL_UDP_OFFLOAD", "0")).kernel()).isEqualTo(UdpKernelMode.OFF);
        UdpOptions full = UdpOptions.fromEnvironment(Map.of("JFLANNEL_UDP_OFFLOAD", "0", "JFLANNEL_UDP_KERNEL", "full"));
        assertThat(full.kernel()).isEqualTo(UdpKernelMode.FULL);
        assertThat(full.kernelAttachable()).isTrue();
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(UdpKernelMode.class)
    void aRecordBuiltInCodeAttachesTheKernelOnlyWhereItsModeCanRun(UdpKernelMode mode) {
        UdpOptions withoutOffloads = new UdpOptions(false, true, false, 1, false, false, mode, GpePath.DEFAULT_PORT);
        assertThat(withoutOffloads.kernelAttachable()).isEqualTo(mode == UdpKernelMode.FULL);
        assertThat(UdpOptions.defaults(mode).kernelAttachable()).isEqualTo(mode != UdpKernelMode.OFF);
    }

    @Test
    void aRecordWithoutAModeIsRefused() {
        assertThatThrownBy(() -> new UdpOptions(true, true, true, 1, false, false, null, GpePath.DEFAULT_PORT))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("udp kernel");
    }

    @Test
    void theGpeDevicesPortIs4790UnlessItsVariableMovesIt() throws Exception {
        assertThat(UdpOptions.fromEnvironment(Map.of()).gpePort()).isEqualTo(4790).isEqualTo(GpePath.DEFAULT_PORT);
        assertThat(UdpOptions.fromEnvironment(Map.of("JFLANNEL_UDP_GPE_PORT", " ")).gpePort()).isEqualTo(4790);
        UdpOptions moved = UdpOptions.fromEnvironment(Map.of("JFLANNEL_UDP_GPE_PORT", " 4791 "));
        assertThat(moved.gpePort()).isEqualTo(4791);
        assertThat(moved).isEqualTo(UdpOptions.shipped().withGpePort(4791));
        assertThat(moved.toString()).endsWith("kernel=gpe gpePort=4791");
        assertThat(UdpOptions.fromEnvironment(Map.of("JFLANNEL_UDP_GPE_PORT", "1")).gpePort()).isEqualTo(1);
        assertThat(UdpOptions.fromEnvironment(Map.of("JFLANNEL_UDP_GPE_PORT", "65535")).gpePort()).isEqualTo(65535);
    }

    @ParameterizedTest(name = "JFLANNEL_UDP_GPE_PORT={0}")
    @ValueSource(strings = {"0", "65536", "-1", "vxlan", "4790.0"})
    void aBadGpePortIsRefusedNamingTheVariable(String value) {
        assertThatThrownBy(() -> UdpOptions.fromEnvironment(Map.of("JFLANNEL_UDP_GPE_PORT", value)))
                .isInstanceOfSatisfying(ConfigException.class, e -> assertThat(e.field()).isEqualTo("JFLANNEL_UDP_GPE_PORT"))
                .hasMessageContaining("JFLANNEL_UDP_GPE_PORT").hasMessageContaining("1..65535").hasMessageContaining(value);
        assertThatThrownBy(() -> UdpOptions.defaults().withGpePort(0)).isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("gpe port");
    }

    @Test
    void aGpePortMovedOntoTheBackendsPortIsRefused() throws Exception {
        assertThat(UdpBackend.checkGpePort(UdpOptions.shipped(), 8285)).isEqualTo(UdpOptions.shipped());
        UdpOptions moved = UdpOptions.shipped().withGpePort(8285);
        assertThat(UdpBackend.checkGpePort(moved, 7890)).isEqualTo(moved);
        assertThatThrownBy(() -> UdpBackend.checkGpePort(moved, 8285))
                .isInstanceOfSatisfying(ConfigException.class, e -> assertThat(e.field()).isEqualTo("JFLANNEL_UDP_GPE_PORT"))
                .hasMessageContaining("JFLANNEL_UDP_GPE_PORT").hasMessageContaining("Port 8285");
        UdpOptions encap = UdpOptions.withKernelEncap().withGpePort(8285);
        assertThat(UdpBackend.checkGpePort(encap, 8285)).as("unused outside gpe").isEqualTo(encap);
    }

    @Test
    void aBackendPortOfTheDefaultGpePortRunsGpeAsEncap() throws Exception {
        assertThat(UdpBackend.checkGpePort(UdpOptions.shipped(), 4790)).isEqualTo(UdpOptions.withKernelEncap());
        assertThat(UdpBackend.checkGpePort(UdpOptions.shipped().withGpePort(4791), 4790).kernel()).isEqualTo(UdpKernelMode.GPE);
        assertThat(UdpBackend.checkGpePort(UdpOptions.withKernel(), 4790)).isEqualTo(UdpOptions.withKernel());
    }

    @Test
    void eachSwitchIsReadFromItsVariable() throws Exception {
        UdpOptions o = UdpOptions.fromEnvironment(Map.of("JFLANNEL_UDP_OFFLOAD", "off", "JFLANNEL_UDP_GRO", "0",
                "JFLANNEL_UDP_COALESCE", "false", "JFLANNEL_UDP_QUEUES", "3", "JFLANNEL_UDP_TX_HANDOFF", "on", "JFLANNEL_UDP_VERIFY_CSUM", "yes",
                "JFLANNEL_UDP_KERNEL", "off"));
        assertThat(o).isEqualTo(new UdpOptions(false, false, false, 3, true, true, UdpKernelMode.OFF, GpePath.DEFAULT_PORT));
    }

    @ParameterizedTest(name = "{0}={1}")
    @CsvSource({"JFLANNEL_UDP_GRO, maybe", "JFLANNEL_UDP_KERNEL, bpf", "JFLANNEL_UDP_KERNEL, gpe2", "JFLANNEL_UDP_KERNEL, 2",
            "JFLANNEL_UDP_KERNEL, encap-only", "JFLANNEL_UDP_VERIFY_CSUM, sometimes", "JFLANNEL_UDP_QUEUES, 0",
            "JFLANNEL_UDP_QUEUES, 17", "JFLANNEL_UDP_QUEUES, two"})
    void aBadValueIsRefusedNamingTheVariable(String name, String value) {
        assertThatThrownBy(() -> UdpOptions.fromEnvironment(Map.of(name, value)))
                .isInstanceOfSatisfying(ConfigException.class, e -> assertThat(e.field()).isEqualTo(name))
                .hasMessageContaining(name)
                .hasMessageContaining(value);
    }
}
