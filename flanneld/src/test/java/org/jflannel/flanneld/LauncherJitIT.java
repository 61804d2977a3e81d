package org.jflannel.flanneld;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * bin/flanneld's JIT: C1 only by default ({@code FLANNELD_JIT} unset or {@code auto}) and with {@code c1}; C1 and
 * C2 with {@code c2} or with the daemon's own choice {@code JFLANNEL_JIT_CHOSEN=c2} (its relaunch for udp and
 * userspace wireguard, issue 40), which {@code FLANNELD_JIT} overrides; anything else refused naming the
 * variable. Read from the JVM's own final flag values.
 */
@Tag("e2e")
class LauncherJitIT {
    private static final Path ROOT = Path.of("").toAbsolutePath().getParent();
    private static final Pattern FLAG = Pattern.compile("^\\s*\\S+\\s+(\\w+)\\s+= (\\S+)", Pattern.MULTILINE);

    @Test
    void c1IsTheDefaultAndC2TurnsTheOptimizingCompilerOn() throws Exception {
        for (String jit : new String[] {null, "auto", "c1"}) {
            Map<String, String> flags = flags(launch(jit, null));
            assertThat(flags).as("FLANNELD_JIT=%s", jit).containsEntry("TieredStopAtLevel", "1")
                    .containsEntry("CICompilerCount", "1").containsEntry("ReservedCodeCacheSize", "25165824");
        }
        Map<String, String> c2 = flags(launch("c2", null));
        assertThat(c2).containsEntry("TieredStopAtLevel", "4").containsEntry("CICompilerCount", "2")
                .containsEntry("ReservedCodeCacheSize", "50331648");
    }

    @Test
    void theDaemonsChoiceOfC2IsTakenUnlessFlanneldJitSaysOtherwise() throws Exception {
        for (String jit : new String[] {null, "auto"}) {
            assertThat(flags(launch(jit, "c2"))).as("FLANNELD_JIT=%s", jit).containsEntry("TieredStopAtLevel", "4")
                    .containsEntry("CICompilerCount", "2");
        }
        assertThat(flags(launch("c1", "c2"))).containsEntry("TieredStopAtLevel", "1");
    }

    /** Kube mode: the launcher's guess from a readable net-conf.json (the first "Type"), which the daemon checks. */
    @ParameterizedTest(name = "{0} (JFLANNEL_WG_DATAPLANE={1}, FLANNELD_JIT={2}) -> TieredStopAtLevel {3}")
    @CsvSource(nullValues = "-", value = {
        "udp,       -,         -,  4",
        "vxlan,     -,         -,  1",
        "host-gw,   -,         -,  1",
        "wireguard, userspace, -,  4",
        "wireguard, kernel,    -,  1",
        "udp,       -,         c1, 1",
    })
    void kubeModeGuessesFromTheNetConfFile(String type, String dataplane, String jit, String level) throws Exception {
        Path conf = Files.createTempFile("net-conf", ".json");
        try {
            Files.writeString(conf, "{\n  \"Network\": \"10.244.0.0/16\",\n  \"Backend\": {\n    \"Type\": \"" + type + "\"\n  }\n}\n");
            Map<String, String> env = new java.util.HashMap<>();
            if (dataplane != null) {
                env.put("JFLANNEL_WG_DATAPLANE", dataplane);
            }
            assertThat(flags(launch(jit, null, env, "--kube-subnet-mgr", "--net-config-path", conf.toString())))
                    .containsEntry("TieredStopAtLevel", level);
            assertThat(flags(launch(jit, null, env, "--kube-subnet-mgr", "--net-config-path=" + conf)))
                    .containsEntry("TieredStopAtLevel", level);
            // etcd mode has its config in etcd: the file is not read, C1 until the daemon decides
            assertThat(flags(launch(jit, null, env, "--net-config-path=" + conf))).containsEntry("TieredStopAtLevel",
                    jit == null ? "1" : level);
        } finally {
            Files.deleteIfExists(conf);
        }
    }

    @Test
    void anUnknownValueIsRefusedNamingTheVariable() throws Exception {
        Result r = launch("c3", null);
        assertThat(r.exit()).isEqualTo(2);
        assertThat(r.output()).contains("FLANNELD_JIT").contains("\"c3\"");
    }

    private record Result(int exit, String output) {
    }

    private static Map<String, String> flags(Result r) {
        assertThat(r.exit()).as(r.output()).isZero();
        Map<String, String> flags = new java.util.HashMap<>();
        Matcher m = FLAG.matcher(r.output());
        while (m.find()) {
            flags.put(m.group(1), m.group(2));
        }
        return flags;
    }

    private static Result launch(String jit, String chosen) throws Exception {
        return launch(jit, chosen, Map.of());
    }

    private static Result launch(String jit, String chosen, Map<String, String> env, String... args) throws Exception {
        List<String> cmd = new java.util.ArrayList<>(List.of(ROOT.resolve("bin/flanneld").toString()));
        cmd.addAll(List.of(args));
        cmd.add("--version");
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true);
        pb.environment().remove("JFLANNEL_WG_DATAPLANE");
        pb.environment().remove("FLANNELD_KUBE_SUBNET_MGR");
        pb.environment().putAll(env);
        pb.environment().remove("FLANNELD_JIT");
        pb.environment().remove("JFLANNEL_JIT_CHOSEN");
        if (jit != null) {
            pb.environment().put("FLANNELD_JIT", jit);
        }
        if (chosen != null) {
            pb.environment().put("JFLANNEL_JIT_CHOSEN", chosen);
        }
        pb.environment().put("FLANNELD_JAVA_OPTS", "-XX:+PrintFlagsFinal");
        Process p = pb.start();
        byte[] out = p.getInputStream().readAllBytes();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        return new Result(p.exitValue(), new String(out, StandardCharsets.UTF_8));
    }
}
