package org.jflannel.cni;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.HashMap;
import java.util.Map;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The fast path (docs/cni-plugin.md, "The fast path"): which mode ran, and that both give the same
 * bytes, files and delegate calls; every way the daemon can be missing, busy, of another version or
 * silent leads to the plugin's own JVM; the socket's bounds.
 */
class FastPathTest {

    private static final String RESULT_031 = "{\"cniVersion\":\"0.3.1\",\"ips\":[{\"version\":\"4\",\"address\":\"10.1.17.2/24\"}]}";

    @TempDir
    Path dir;
    private TestLauncher launcher;

    @BeforeEach
    void setUp() {
        launcher = TestLauncher.shared();
    }

    private PluginHarness harness(String name) throws IOException {
        return new PluginHarness(Files.createDirectories(dir.resolve(name))).subnetEnv(PluginHarness.V4_ENV).reply("ADD", RESULT_031);
    }

    private PluginHarness.Outcome viaLauncher(PluginHarness h, String command, Path socket) {
        Map<String, String> env = new HashMap<>(h.env);
        env.put("CNI_COMMAND", command);
        env.put("JFLANNEL_CNI_SOCKET", socket.toString());
        return launcher.run(env, h.config("\"cniVersion\":\"0.3.1\"").getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void addAndDelThroughTheDaemonGiveTheInProcessBytesFilesAndCallsWithoutAJvm() throws Exception {
        PluginHarness local = harness("local");
        PluginHarness.Outcome addLocal = PluginHarness.runInProcess(withCommand(local, "ADD"), local.config("\"cniVersion\":\"0.3.1\""));
        String scratchLocal = Files.readString(local.scratch());
        PluginHarness.Outcome delLocal = PluginHarness.runInProcess(withCommand(local, "DEL"), local.config("\"cniVersion\":\"0.3.1\""));

        PluginHarness fast = harness("fast");
        try (CniServer server = CniServer.start(dir.resolve("cni.sock"), fast.subnetFile, 8)) {
            long jvms = launcher.fallbacks();
            PluginHarness.Outcome addFast = viaLauncher(fast, "ADD", dir.resolve("cni.sock"));
            String scratchFast = Files.readString(fast.scratch());
            PluginHarness.Outcome delFast = viaLauncher(fast, "DEL", dir.resolve("cni.sock"));

            assertThat(server.served()).isEqualTo(2);
            assertThat(launcher.fallbacks()).isEqualTo(jvms);
            assertThat(addFast).isEqualTo(new PluginHarness.Outcome(addLocal.exit(), addLocal.stdout(),
                addLocal.stderr().replace(local.dir.toString(), fast.dir.toString())));
            assertThat(delFast).isEqualTo(delLocal);
            assertThat(scratchFast).isEqualTo(scratchLocal);
            assertThat(fast.scratch()).doesNotExist();
            assertThat(fast.calls()).isEqualTo(local.calls());
        }
    }

    private static Map<String, String> withCommand(PluginHarness h, String command) {
        Map<String, String> env = new HashMap<>(h.env);
        env.put("CNI_COMMAND", command);
        return env;
    }

    @Test
    void scratchFileOfTheFastPathIs0600InA0700Directory() throws Exception {
        PluginHarness h = harness("perm");
        try (CniServer server = CniServer.start(dir.resolve("cni.sock"), h.subnetFile, 8)) {
            assertThat(viaLauncher(h, "ADD", dir.resolve("cni.sock")).exit()).isZero();
            assertThat(server.served()).isEqualTo(1);
        }
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(h.scratch()))).isEqualTo("rw-------");
        assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(h.dataDir))).isEqualTo("rwx------");
    }

    @Test
    void noDaemonRunsThePluginsOwnJvmWithTheSameResult() throws Exception {
        PluginHarness h = harness("nodaemon");
        long jvms = launcher.fallbacks();
        PluginHarness.Outcome o = viaLauncher(h, "ADD", dir.resolve("absent.sock"));
        assertThat(o.exit()).as(o.stdout() + o.stderr()).isZero();
        PluginHarness local = harness("nodaemon-local");
        assertThat(o.stdout()).isEqualTo(PluginHarness.runInProcess(withCommand(local, "ADD"), local.config("\"cniVersion\":\"0.3.1\"")).stdout());
        assertThat(launcher.fallbacks()).isEqualTo(jvms + 1);
        assertThat(h.calls()).extracting(PluginHarness.Call::command).containsExactly("ADD");
    }

    @Test
    void staleSocketRunsThePluginsOwnJvm() throws Exception {
        PluginHarness h = harness("stale");
        CniServer.start(dir.resolve("cni.sock"), h.subnetFile, 8).close();
        Files.createFile(dir.resolve("stale.sock")); // not a socket at all
        long jvms = launcher.fallbacks();
        assertThat(viaLauncher(h, "ADD", dir.resolve("stale.sock")).exit()).isZero();
        assertThat(launcher.fallbacks()).isEqualTo(jvms + 1);
    }

    @Test
    void busyDaemonTellsTheLauncherToRunItsOwnJvm() throws Exception {
        PluginHarness h = harness("busy");
        try (CniServer server = CniServer.start(dir.resolve("cni.sock"), h.subnetFile, 0)) {
            long jvms = launcher.fallbacks();
            assertThat(viaLauncher(h, "ADD", dir.resolve("cni.sock")).exit()).isZero();
            assertThat(server.fallbacks()).isEqualTo(1);
            assertThat(server.served()).isZero();
            assertThat(launcher.fallbacks()).isEqualTo(jvms + 1);
        }
    }

    @Test
    void subnetFileTheDaemonDoesNotWriteIsLeftToThePluginsOwnJvm() throws Exception {
        PluginHarness h = harness("othersubnet");
        try (CniServer server = CniServer.start(dir.resolve("cni.sock"), dir.resolve("daemons-own-subnet.env"), 8)) {
            long jvms = launcher.fallbacks();
            assertThat(viaLauncher(h, "ADD", dir.resolve("cni.sock")).exit()).isZero();
            assertThat(server.fallbacks()).isEqualTo(1);
            assertThat(launcher.fallbacks()).isEqualTo(jvms + 1);
            assertThat(h.calls()).extracting(PluginHarness.Call::command).containsExactly("ADD");
        }
    }

    @Test
    void daemonOfAnotherProtocolVersionIsNotFollowed() throws Exception {
        PluginHarness h = harness("version");
        long jvms = launcher.fallbacks();
        PluginHarness.Outcome o = withFakeDaemon(h, (in, out) -> {
            // a version-2 daemon's step: the launcher must not perform it
            byte[] frame = {0, 0, 0, 3, 2, 'S', 3};
            out.write(frame);
            out.flush();
        });
        assertThat(o.exit()).isZero();
        assertThat(launcher.fallbacks()).isEqualTo(jvms + 1);
        assertThat(h.calls()).extracting(PluginHarness.Call::command).containsExactly("ADD");
    }

    @Test
    void silentDaemonIsGivenUpAndThePluginsOwnJvmRuns() throws Exception {
        PluginHarness h = harness("silent");
        long jvms = launcher.fallbacks();
        PluginHarness.Outcome o = withFakeDaemon(h, (in, out) -> {
            Wire.read(in, Wire.MAX_REQUEST);
            while (in.read() >= 0) {
                // silent until the launcher hangs up: it waits FIRST_ANSWER_MS only, then runs the JVM
            }
        });
        assertThat(o.exit()).isZero();
        assertThat(launcher.fallbacks()).isEqualTo(jvms + 1);
    }

    @Test
    void malformedRequestIsAnsweredWithACniError() throws Exception {
        try (CniServer server = CniServer.start(dir.resolve("cni.sock"), dir.resolve("subnet.env"), 8);
             SocketChannel c = SocketChannel.open(UnixDomainSocketAddress.of(dir.resolve("cni.sock")))) {
            OutputStream out = Channels.newOutputStream(c);
            new Wire.Builder(Wire.REQUEST).u8(0).i32(2).string("CNI_COMMAND=ADD").writeTo(out); // the second variable is missing
            InputStream in = Channels.newInputStream(c);
            assertThat(Wire.read(in, Wire.MAX_REPLY).type()).isEqualTo(Wire.ACCEPTED);
            Wire.Frame f = Wire.read(in, Wire.MAX_REPLY);
            assertThat(f.type()).isEqualTo(Wire.DONE);
            assertThat(f.u8()).as("steps before the print").isZero();
            assertThat(f.u8()).isEqualTo(1);
            assertThat(f.string()).isEqualTo(PluginHarness.error("1.1.0", 6, "fast path: malformed request: message truncated", ""));
        }
    }

    @Test
    void launcherOfAnotherProtocolVersionIsToldToFallBack() throws Exception {
        try (CniServer server = CniServer.start(dir.resolve("cni.sock"), dir.resolve("subnet.env"), 8);
             SocketChannel c = SocketChannel.open(UnixDomainSocketAddress.of(dir.resolve("cni.sock")))) {
            Channels.newOutputStream(c).write(new byte[] {0, 0, 0, 3, Wire.VERSION + 1, 'Q', 0}); // a newer launcher
            InputStream in = Channels.newInputStream(c);
            assertThat(Wire.read(in, Wire.MAX_REPLY).type()).isEqualTo(Wire.ACCEPTED);
            Wire.Frame f = Wire.read(in, Wire.MAX_REPLY);
            assertThat(f.type()).isEqualTo(Wire.FALLBACK);
            assertThat(f.version()).as("framed as every version frames it").isEqualTo(Wire.FIRST_VERSION);
            assertThat(server.fallbacks()).isEqualTo(1);
        }
    }

    @Test
    void oversizedRequestIsRefusedWithoutReadingIt() throws Exception {
        try (CniServer server = CniServer.start(dir.resolve("cni.sock"), dir.resolve("subnet.env"), 8);
             SocketChannel c = SocketChannel.open(UnixDomainSocketAddress.of(dir.resolve("cni.sock")))) {
            OutputStream out = Channels.newOutputStream(c);
            out.write(new byte[] {0x7f, 0, 0, 0, 1, 'Q'});
            InputStream in = Channels.newInputStream(c);
            assertThat(Wire.read(in, Wire.MAX_REPLY).type()).isEqualTo(Wire.ACCEPTED);
            Wire.Frame f = Wire.read(in, Wire.MAX_REPLY);
            assertThat(f.type()).isEqualTo(Wire.DONE);
            assertThat(f.u8()).as("steps before the print").isZero();
            f.u8();
            assertThat(f.string()).contains("\"code\": 6").contains("outside 2..1048576");
        }
    }

    @Test
    void socketIsRootOnly() throws Exception {
        try (CniServer server = CniServer.start(dir.resolve("run").resolve("cni.sock"), dir.resolve("subnet.env"), 8)) {
            assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve("run").resolve("cni.sock"))))
                .isEqualTo("rw-------");
        }
        assertThat(dir.resolve("run").resolve("cni.sock")).doesNotExist();
    }

    /** A daemon that talks to one launcher run as {@code script} says. */
    interface Script {
        void run(InputStream in, OutputStream out) throws Exception;
    }

    private PluginHarness.Outcome withFakeDaemon(PluginHarness h, Script script) throws Exception {
        Path sock = dir.resolve("fake.sock");
        try (ServerSocketChannel ss = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            ss.bind(UnixDomainSocketAddress.of(sock));
            Thread daemon = new Thread(() -> {
                try (SocketChannel c = ss.accept()) {
                    script.run(Channels.newInputStream(c), Channels.newOutputStream(c));
                } catch (Exception e) {
                    // the launcher went its own way
                }
            }, "fake-daemon");
            daemon.start();
            PluginHarness.Outcome o = viaLauncher(h, "ADD", sock);
            daemon.join(60_000);
            assertThat(daemon.isAlive()).as("the fake daemon's script ended after the launcher's exit").isFalse();
            return o;
        }
    }
}
