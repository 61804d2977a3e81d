package org.jflannel.cni;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Deeply nested stdin on the plugin's real JVM settings (-Xint -Xss512k, as the launcher starts it):
 * the deepest accepted config goes through ADD up to the delegate lookup, one level more is a CNI
 * decoding error; never a StackOverflowError with nothing on stdout (CniStdinFuzzTest's finding).
 */
class NestingDepthTest {

    @Test
    void deepestAcceptedConfigReachesTheDelegateAndOneLevelMoreIsACniError(@TempDir Path dir) throws Exception {
        Files.createDirectories(dir.resolve("bin"));
        Files.writeString(dir.resolve("subnet.env"), PluginHarness.KUBE_ENV);
        // the config object is level 1, the delegate's containers (objects and arrays in turn) the rest
        String ok = nested(dir, GoJson.MAX_DEPTH - 1);
        String tooDeep = nested(dir, GoJson.MAX_DEPTH);

        String[] accepted = run(dir, ok);
        String[] rejected = run(dir, tooDeep);

        assertThat(accepted[0]).isEqualTo("1");
        assertThat(accepted[1]).contains("\"code\": 999").contains("failed to find plugin");
        assertThat(rejected[0]).isEqualTo("1");
        assertThat(rejected[1]).contains("\"code\": 6").contains("exceeded max depth");
        assertThat(accepted[2] + rejected[2]).doesNotContain("StackOverflowError");
    }

    private static String nested(Path dir, int levels) {
        StringBuilder sb = new StringBuilder("{\"cniVersion\":\"1.0.0\",\"name\":\"x\",\"type\":\"flannel\",\"subnetFile\":\"")
                .append(dir.resolve("subnet.env")).append("\",\"dataDir\":\"").append(dir.resolve("data")).append("\",\"delegate\":");
        for (int i = 0; i < levels; i++) {
            sb.append(i % 2 == 0 ? "{\"a\":" : "[");
        }
        sb.append("1");
        for (int i = levels - 1; i >= 0; i--) {
            sb.append(i % 2 == 0 ? "}" : "]");
        }
        return sb.append('}').toString();
    }

    /** exit status, stdout, stderr of the plugin's main class on a JVM started as the launcher starts it. */
    private static String[] run(Path dir, String stdin) throws Exception {
        String java = ProcessHandle.current().info().command().orElse("java");
        String cp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        Path in = dir.resolve("stdin.json");
        Files.writeString(in, stdin);
        var pb = new ProcessBuilder(java, "-Xint", "-Xss512k", "-XX:+UseSerialGC", "-cp", cp, Main.class.getName())
                .redirectInput(in.toFile()).redirectOutput(dir.resolve("out").toFile()).redirectError(dir.resolve("err").toFile());
        pb.environment().put("CNI_COMMAND", "ADD");
        pb.environment().put("CNI_CONTAINERID", "c0ffee01");
        pb.environment().put("CNI_NETNS", "/run/netns/none");
        pb.environment().put("CNI_IFNAME", "eth0");
        pb.environment().put("CNI_PATH", dir.resolve("bin").toString());
        Process p = pb.start();
        if (!p.waitFor(60, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new AssertionError("the plugin did not finish");
        }
        return new String[] {Integer.toString(p.exitValue()), Files.readString(dir.resolve("out"), StandardCharsets.UTF_8),
            Files.readString(dir.resolve("err"), StandardCharsets.UTF_8)};
    }
}
