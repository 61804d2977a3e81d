package org.jflannel.cni;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A plugin file of one fast-path protocol version beside a daemon of the next, both ways, as a node
 * meets them during a rolling upgrade (the plugin file is replaced by the new pod's init container,
 * the daemon when the new pod starts, in that order; a rollback reverses it): each request falls back
 * to the plugin's own JVM and gives the same result, never a mix. The previous version is the real
 * one, built here from the project's history: its launcher compiled from its source, its daemon side
 * ({@code CniServer} and the plugin's code as they were) compiled with javac and run in a JVM of its own.
 */
class VersionSkewTest {

    /** The last commit whose fast path spoke Wire version 1 (one step a frame). */
    static final String PREVIOUS = "e16f80f";

    @TempDir
    static Path old;
    private static TestLauncher oldLauncher;
    private static Path oldClasses;

    @TempDir
    Path dir;

    @BeforeAll
    static void buildThePreviousVersion() throws Exception {
        Path repo = TestLauncher.SOURCE.getParent().getParent().getParent().getParent();
        git(repo, "cat-file", "-e", PREVIOUS + "^{commit}"); // skips without the history
        Path src = old.resolve("src");
        extract(repo, "packaging/src/launcher/flannel-launcher.c", src);
        oldLauncher = new TestLauncher(old.resolve("launcher"), src.resolve("packaging/src/launcher/flannel-launcher.c"));
        List<String> files = new ArrayList<>();
        for (String f : git(repo, "ls-tree", "-r", "--name-only", PREVIOUS, "cni-flannel/src/main/java").split("\n")) {
            extract(repo, f, src);
            files.add(src.resolve(f).toString());
        }
        oldClasses = Files.createDirectories(old.resolve("classes"));
        List<String> javac = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "javac").toString(),
            "-nowarn", "-proc:none", "-d", oldClasses.toString(), "-cp", System.getProperty("java.class.path")));
        javac.addAll(files);
        Process p = new ProcessBuilder(javac).redirectErrorStream(true).start();
        String log = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(p.waitFor()).as("javac of %s's plugin: %s", PREVIOUS, log).isZero();
    }

    private static void extract(Path repo, String path, Path into) throws IOException, InterruptedException {
        Path target = into.resolve(path);
        Files.createDirectories(target.getParent());
        Process p = new ProcessBuilder("git", "-C", repo.toString(), "show", PREVIOUS + ":" + path)
            .redirectOutput(target.toFile()).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        assertThat(p.waitFor()).as("git show %s:%s (the test needs the project's history)", PREVIOUS, path).isZero();
    }

    private static String git(Path repo, String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of("git", "-C", repo.toString()));
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        Assumptions.assumeTrue(p.waitFor() == 0, "skipped: needs the project's git history (commit " + PREVIOUS + ")");
        return out;
    }

    private PluginHarness harness(String name) throws IOException {
        return new PluginHarness(Files.createDirectories(dir.resolve(name))).subnetEnv(PluginHarness.V4_ENV)
            .reply("ADD", "{\"cniVersion\":\"0.3.1\",\"ips\":[{\"version\":\"4\",\"address\":\"10.1.17.2/24\"}]}");
    }

    private static PluginHarness.Outcome call(TestLauncher launcher, PluginHarness h, String command, Path socket) {
        Map<String, String> env = new HashMap<>(h.env);
        env.put("CNI_COMMAND", command);
        env.put("JFLANNEL_CNI_SOCKET", socket.toString());
        return launcher.run(env, h.config("\"cniVersion\":\"0.3.1\"").getBytes(StandardCharsets.UTF_8));
    }

    /** ADD then DEL in process: what every path must print. */
    private List<PluginHarness.Outcome> expected(PluginHarness h) {
        List<PluginHarness.Outcome> out = new ArrayList<>();
        for (String c : List.of("ADD", "DEL")) {
            Map<String, String> env = new HashMap<>(h.env);
            env.put("CNI_COMMAND", c);
            out.add(PluginHarness.runInProcess(env, h.config("\"cniVersion\":\"0.3.1\"")));
        }
        return out;
    }

    private static List<PluginHarness.Outcome> addDel(TestLauncher launcher, PluginHarness h, Path socket) {
        return List.of(call(launcher, h, "ADD", socket), call(launcher, h, "DEL", socket));
    }

    private static PluginHarness.Outcome rebased(PluginHarness.Outcome o, PluginHarness from, PluginHarness to) {
        return new PluginHarness.Outcome(o.exit(), o.stdout(), o.stderr().replace(from.dir.toString(), to.dir.toString()));
    }

    @Test
    void previousPluginFileBesideThisDaemonFallsBackWithTheSameResult() throws Exception {
        PluginHarness local = harness("local");
        List<PluginHarness.Outcome> want = expected(local);
        PluginHarness h = harness("skew");
        try (CniServer server = CniServer.start(dir.resolve("cni.sock"), h.subnetFile, 8)) {
            long jvms = oldLauncher.fallbacks();
            List<PluginHarness.Outcome> got = addDel(oldLauncher, h, dir.resolve("cni.sock"));
            assertThat(got.get(0)).isEqualTo(rebased(want.get(0), local, h));
            assertThat(got.get(1)).isEqualTo(rebased(want.get(1), local, h));
            assertThat(server.served()).as("served on the fast path").isZero();
            assertThat(server.fallbacks()).as("told to fall back").isEqualTo(2);
            assertThat(oldLauncher.fallbacks()).as("the plugin's own JVM ran").isEqualTo(jvms + 2);
            assertThat(h.calls()).isEqualTo(local.calls());
            assertThat(h.scratch()).doesNotExist();
        }
    }

    @Test
    void thisPluginFileBesideThePreviousDaemonFallsBackWithTheSameResult() throws Exception {
        PluginHarness local = harness("local");
        List<PluginHarness.Outcome> want = expected(local);
        PluginHarness h = harness("skew");
        Path sock = dir.resolve("old.sock");
        Process daemon = previousDaemon(sock, h.subnetFile);
        try {
            TestLauncher launcher = TestLauncher.shared();
            long jvms = launcher.fallbacks();
            List<PluginHarness.Outcome> got = addDel(launcher, h, sock);
            assertThat(got.get(0)).isEqualTo(rebased(want.get(0), local, h));
            assertThat(got.get(1)).isEqualTo(rebased(want.get(1), local, h));
            assertThat(launcher.fallbacks()).as("the plugin's own JVM ran").isEqualTo(jvms + 2);
            assertThat(h.calls()).isEqualTo(local.calls());

            // the previous daemon does serve its own launcher: the fallbacks above are the skew's, not a broken build's
            long oldJvms = oldLauncher.fallbacks();
            List<PluginHarness.Outcome> served = addDel(oldLauncher, h, sock); // the subnet.env that daemon serves
            assertThat(served.get(0)).isEqualTo(rebased(want.get(0), local, h));
            assertThat(served.get(1)).isEqualTo(rebased(want.get(1), local, h));
            assertThat(oldLauncher.fallbacks()).as("version 1 on both sides: the fast path").isEqualTo(oldJvms);
        } finally {
            daemon.destroy();
            daemon.waitFor(10, TimeUnit.SECONDS);
        }
        // its shutdown hook's counts: its own launcher served, this one told to fall back
        assertThat(Files.readString(sock.resolveSibling("old-daemon.log"))).contains("served=2 fallbacks=2 refused=0");
    }

    /** The previous version's CniServer in a JVM of its own, serving {@code subnetFile} on {@code socket}. */
    private static Process previousDaemon(Path socket, Path subnetFile) throws Exception {
        String cp = oldClasses + File.pathSeparator + Stream.of(System.getProperty("java.class.path").split(File.pathSeparator))
            .filter(e -> !e.endsWith("cni-flannel/target/classes") && !e.endsWith("cni-flannel/target/test-classes"))
            .reduce((a, b) -> a + File.pathSeparator + b).orElse("");
        Process p = new ProcessBuilder(Path.of(System.getProperty("java.home"), "bin", "java").toString(), "-XX:TieredStopAtLevel=1",
            "-cp", cp, "org.jflannel.cni.CniServer", socket.toString(), subnetFile.toString())
            .redirectOutput(ProcessBuilder.Redirect.DISCARD).redirectError(socket.resolveSibling("old-daemon.log").toFile()).start();
        for (int i = 0; i < 200 && !Files.exists(socket); i++) {
            Thread.sleep(50);
        }
        assertThat(socket).as("the previous daemon's socket").exists();
        return p;
    }
}
