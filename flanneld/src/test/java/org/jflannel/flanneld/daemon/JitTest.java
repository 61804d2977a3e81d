package org.jflannel.flanneld.daemon;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Map;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import org.jflannel.core.NetConf;
import org.jflannel.flanneld.daemon.Jit.Choice;
import org.jflannel.flanneld.daemon.Jit.Compiler;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

/** Issue 40: the JIT follows the backend of net-conf.json; FLANNELD_JIT always wins; a relaunch only C1 → C2, once. */
class JitTest {
    private static final Map<String, String> LAUNCHED = Map.of(Jit.LAUNCHER, "/opt/jflannel/bin/flanneld");

    @ParameterizedTest(name = "{0} (userspace wireguard: {1}) -> {2}")
    @CsvSource({
        "vxlan,     false, C1",
        "host-gw,   false, C1",
        "udp,       false, C2",
        "wireguard, true,  C2",
        "wireguard, false, C1",
        "extension, false, C1",
        "alloc,     false, C1",
    })
    void theBackendOfNetConfChoosesTheJit(String type, boolean userspace, Compiler expected) throws Exception {
        Choice c = Jit.choose(conf(type).backend(), Map.of(), () -> userspace);
        assertThat(c.compiler()).isEqualTo(expected);
        assertThat(c.reason()).startsWith("Backend.Type=" + type);
    }

    @Test
    void aNetConfWithoutBackendIsUdpAsUpstreamsAndGetsC2() throws Exception {
        NetConf c = NetConf.parse("{\"Network\":\"10.244.0.0/16\"}", NetConf.Mode.KUBE);
        assertThat(Jit.choose(c.backend(), Map.of(), () -> false).compiler()).isEqualTo(Compiler.C2);
    }

    @Test
    void userspaceIsAskedOnlyForWireguard() throws Exception {
        AtomicInteger asked = new AtomicInteger();
        BooleanSupplier probe = () -> asked.incrementAndGet() > 0;
        Jit.choose(conf("vxlan").backend(), Map.of(), probe);
        Jit.choose(conf("udp").backend(), Map.of(), probe);
        assertThat(asked).hasValue(0);
        Jit.choose(conf("wireguard").backend(), Map.of(), probe);
        assertThat(asked).hasValue(1);
    }

    @ParameterizedTest
    @CsvSource({"udp, c1, C1", "vxlan, c2, C2", "wireguard, c1, C1"})
    void flanneldJitOverridesTheBackend(String type, String override, Compiler expected) throws Exception {
        Choice c = Jit.choose(conf(type).backend(), Map.of("FLANNELD_JIT", override), () -> true);
        assertThat(c).isEqualTo(new Choice(expected, "FLANNELD_JIT=" + override));
    }

    @Test
    void flanneldJitAutoIsTheBackendsChoice() throws Exception {
        assertThat(Jit.choose(conf("udp").backend(), Map.of("FLANNELD_JIT", "auto"), () -> false).compiler()).isEqualTo(Compiler.C2);
        Choice c2 = Jit.choose(conf("udp").backend(), Map.of(), () -> false);
        assertThat(Jit.relaunchWanted(c2, Optional.of(Compiler.C1), Map.of(Jit.LAUNCHER, "/l", "FLANNELD_JIT", "auto"), false)).isTrue();
        assertThat(Jit.relaunchWanted(c2, Optional.of(Compiler.C1), Map.of(Jit.LAUNCHER, "/l", "FLANNELD_JIT", "c1"), false)).isFalse();
    }

    @Test
    void relaunchedOnlyFromC1ToC2ByALauncherOnce() throws Exception {
        Choice c2 = Jit.choose(conf("udp").backend(), Map.of(), () -> false);
        Choice c1 = Jit.choose(conf("vxlan").backend(), Map.of(), () -> false);
        assertThat(Jit.relaunchWanted(c2, Optional.of(Compiler.C1), LAUNCHED, false)).isTrue();
        assertThat(Jit.relaunchWanted(c2, Optional.of(Compiler.C2), LAUNCHED, false)).as("already C2").isFalse();
        assertThat(Jit.relaunchWanted(c2, Optional.empty(), LAUNCHED, false)).as("unknown JIT").isFalse();
        assertThat(Jit.relaunchWanted(c1, Optional.of(Compiler.C2), LAUNCHED, false)).as("C1 wanted: memory only, no second start").isFalse();
        assertThat(Jit.relaunchWanted(c2, Optional.of(Compiler.C1), Map.of(), false)).as("no launcher to exec").isFalse();
        Map<String, String> second = Jit.relaunchEnv(LAUNCHED, Compiler.C2, 42);
        assertThat(second).containsEntry(Jit.CHOSEN, "c2").containsEntry(Jit.RELAUNCHED_AT, "42").containsAllEntriesOf(LAUNCHED);
        assertThat(Jit.relaunchWanted(c2, Optional.of(Compiler.C1), second, false)).as("the second run never relaunches").isFalse();
    }

    @Test
    void aWrongGuessOfTheLauncherIsCorrectedEitherWayARightOneStays() throws Exception {
        Choice c2 = Jit.choose(conf("udp").backend(), Map.of(), () -> false);
        Choice c1 = Jit.choose(conf("wireguard").backend(), Map.of(), () -> false); // the kernel's WireGuard
        assertThat(Jit.relaunchWanted(c1, Optional.of(Compiler.C2), LAUNCHED, true)).as("guessed c2, the kernel seals").isTrue();
        assertThat(Jit.relaunchWanted(c2, Optional.of(Compiler.C1), LAUNCHED, true)).as("guessed c1, udp").isTrue();
        assertThat(Jit.relaunchWanted(c2, Optional.of(Compiler.C2), LAUNCHED, true)).as("guessed right").isFalse();
        assertThat(Jit.relaunchWanted(c1, Optional.of(Compiler.C1), LAUNCHED, true)).as("guessed right").isFalse();
        Map<String, String> second = Jit.relaunchEnv(LAUNCHED, Compiler.C1, 42);
        assertThat(Jit.relaunchWanted(c1, Optional.of(Compiler.C2), second, true)).as("the second run never relaunches").isFalse();
    }

    @Test
    void theLaunchersPropertyTellsTheJitInUse() {
        String before = System.getProperty("jflannel.jit");
        try {
            System.setProperty("jflannel.jit", "c2");
            assertThat(Jit.running()).contains(Compiler.C2);
            System.setProperty("jflannel.jit", "c1");
            assertThat(Jit.running()).contains(Compiler.C1);
        } finally {
            if (before == null) {
                System.clearProperty("jflannel.jit");
            } else {
                System.setProperty("jflannel.jit", before);
            }
        }
    }

    private static NetConf conf(String type) throws Exception {
        return NetConf.parse("{\"Network\":\"10.244.0.0/16\",\"Backend\":{\"Type\":\"" + type + "\"}}", NetConf.Mode.KUBE);
    }
}
