package org.jflannel.backend.wireguard.crypto;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Set;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

/** The engine order as a pure function of the CPU's flags and HotSpot's UseAVX (no engine is run here). */
class AeadPathsTest {
    private static final String INTRINSICS = AeadPaths.INTRINSICS;
    private static final String POLY64 = Poly64Engine.NAME;

    @ParameterizedTest(name = "flags {0}, UseAVX {1} -> {2} first")
    @CsvSource({
        // this machine (Xeon, Sapphire Rapids class): AVX-512 IFMA, the JDK's intrinsic at the default UseAVX=3
        "'avx avx2 avx512f avx512vl avx512ifma', -1, jdk-intrinsics",
        "'avx avx2 avx512f avx512vl avx512ifma', 3, jdk-intrinsics",
        // the same with -XX:UseAVX=2 (HotSpot clears its AVX-512 features): no intrinsic
        "'avx avx2 avx512f avx512vl avx512ifma', 2, jdk-chacha20-poly64",
        // AMD Zen 2/3 and most clouds' AVX2 hosts
        "'avx avx2 bmi2 adx', -1, jdk-chacha20-poly64",
        "'avx avx2 bmi2 adx', 3, jdk-chacha20-poly64",
        // IFMA without AVX-512VL: HotSpot's stub needs both
        "'avx avx2 avx512f avx512ifma', 3, jdk-chacha20-poly64",
        // AVX-IFMA (VEX, e.g. Sierra Forest, Arrow Lake): the JDK's AVX2 IFMA stub, at UseAVX 2 as well, not at 1
        "'avx avx2 avx_ifma', -1, jdk-intrinsics",
        "'avx avx2 avx_ifma', 2, jdk-intrinsics",
        "'avx avx2 avx_ifma', 1, jdk-chacha20-poly64",
        // no vector extensions at all
        "'sse2 sse4_2', -1, jdk-chacha20-poly64",
    })
    void theFirstEngineFollowsTheCpusIfmaAndUseAvx(String flags, int useAvx, String first) {
        AeadPaths.Preference p = AeadPaths.prefer(new CpuFeatures(Set.of(flags.split(" ")), useAvx, "test"));
        assertThat(p.order()).as(p.reason()).containsExactlyInAnyOrder(INTRINSICS, POLY64).first().isEqualTo(first);
        assertThat(p.reason()).contains("UseAVX=");
    }

    @Test
    void unknownCpuFlagsKeepTheJdksPoly1305First() {
        AeadPaths.Preference p = AeadPaths.prefer(new CpuFeatures(Set.of(), -1, "test"));
        assertThat(p.order()).containsExactly(INTRINSICS, POLY64);
        assertThat(p.reason()).contains("unknown");
    }

    @Test
    void cpuinfosFirstFlagsLineIsRead() {
        List<String> cpuinfo = List.of("processor\t: 0", "model name\t: Intel(R) Xeon(R) Processor",
                "flags\t\t: fpu avx2 avx512ifma avx512vl", "processor\t: 1", "flags\t\t: fpu");
        assertThat(CpuFeatures.cpuFlags(cpuinfo)).containsExactlyInAnyOrder("fpu", "avx2", "avx512ifma", "avx512vl");
        assertThat(CpuFeatures.cpuFlags(List.of("no flags here"))).isEmpty();
    }

    @Test
    void theLastUseAvxOnTheCommandLineWins() {
        assertThat(CpuFeatures.useAvxFrom("java -Xmx64m -jar x.jar")).isEqualTo(-1);
        assertThat(CpuFeatures.useAvxFrom("-XX:UseAVX=3 java -XX:UseAVX=2 -jar x.jar")).isEqualTo(2);
    }

    @Test
    void thisJvmsUseAvxIsSeen() {
        // the test JVM runs without -XX:UseAVX unless the build passes one: either way detect() reports a value or -1
        CpuFeatures cpu = CpuFeatures.detect();
        assertThat(cpu.useAvx()).isBetween(-1, 3);
        assertThat(cpu.describe()).contains("UseAVX=");
    }
}
