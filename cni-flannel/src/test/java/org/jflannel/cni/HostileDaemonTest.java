package org.jflannel.cni;

import static org.assertj.core.api.Assertions.assertThat;

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
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A compromised flanneld plays daemon to the real launcher: whatever its steps say, the launcher
 * runs only a delegate found by a plain name on the runtime's CNI_PATH, with the runtime's
 * environment, and touches only the scratch file it names itself (docs/cni-plugin.md, "What the
 * launcher trusts").
 */
class HostileDaemonTest {

    @TempDir
    Path dir;
    private PluginHarness h;
    private Path outside;
    /** How many steps the launcher performed of each frame {@link #play} sent. */
    private final List<Integer> performed = new ArrayList<>();

    @BeforeEach
    void setUp() throws Exception {
        h = new PluginHarness(dir);
        outside = Files.createDirectories(dir.resolve("outside"));
        // a program outside CNI_PATH the hostile daemon would like to run as root
        Path evil = outside.resolve("evil");
        Files.writeString(evil, "#!/bin/sh\ntouch " + outside.resolve("pwned") + "\n");
        Files.setPosixFilePermissions(evil, PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    /** Sends each step frame, collects each reply (positioned after its count); then prints "done". */
    private List<Wire.Frame> play(Map<String, String> extraEnv, List<Wire.Builder> steps) throws Exception {
        return play(extraEnv, steps, List.of());
    }

    /** As {@link #play(Map, List)}, the done frame carrying {@code last} (steps performed before the print). */
    private List<Wire.Frame> play(Map<String, String> extraEnv, List<Wire.Builder> steps, List<Wire.Builder> last) throws Exception {
        Path sock = dir.resolve("hostile.sock");
        List<Wire.Frame> replies = new ArrayList<>();
        performed.clear();
        AtomicReference<Exception> failure = new AtomicReference<>();
        try (ServerSocketChannel ss = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            ss.bind(UnixDomainSocketAddress.of(sock));
            Thread daemon = new Thread(() -> {
                try (SocketChannel c = ss.accept()) {
                    InputStream in = Channels.newInputStream(c);
                    OutputStream out = Channels.newOutputStream(c);
                    Wire.read(in, Wire.MAX_REQUEST);
                    for (Wire.Builder step : steps) {
                        step.writeTo(out);
                        Wire.Frame r = Wire.read(in, Wire.MAX_REPLY);
                        performed.add(r.u8());
                        replies.add(r);
                    }
                    Wire.Builder done = new Wire.Builder(Wire.DONE).u8(last.size());
                    last.forEach(done::raw);
                    done.u8(0).string("done").bytes(new byte[0]).writeTo(out);
                } catch (Exception e) {
                    failure.set(e);
                }
            }, "hostile-daemon");
            daemon.start();
            Map<String, String> env = new HashMap<>(h.env);
            env.putAll(extraEnv);
            env.put("JFLANNEL_CNI_SOCKET", sock.toString());
            PluginHarness.Outcome o = TestLauncher.shared().run(env, "{}".getBytes(StandardCharsets.UTF_8));
            daemon.join();
            assertThat(failure.get()).isNull();
            assertThat(o.stdout()).isEqualTo("done");
        }
        return replies;
    }

    /** A step frame of {@code steps}. */
    private static Wire.Builder frame(Wire.Builder... steps) {
        Wire.Builder f = new Wire.Builder(Wire.STEP).u8(steps.length);
        for (Wire.Builder s : steps) {
            f.raw(s);
        }
        return f;
    }

    private static Wire.Builder findStep(String name) {
        return Wire.Builder.step(Wire.FIND).string(name);
    }

    private static Wire.Builder execStep(String name, String command) {
        return Wire.Builder.step(Wire.EXEC).string(name).string(command).bytes(new byte[0]);
    }

    private static Wire.Builder find(String name) {
        return frame(findStep(name));
    }

    private static Wire.Builder exec(String name, String command) {
        return frame(execStep(name, command));
    }

    private static Wire.Builder write(String text) {
        return Wire.Builder.step(Wire.WRITE_SCRATCH).bytes(text.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void delegatesAreOnlyPlainNamesOnTheRuntimesCniPath() throws Exception {
        String evil = outside.resolve("evil").toString();
        List<Wire.Frame> r = play(Map.of(), List.of(find(evil), find("../outside/evil"), find("evil"),
            exec(evil, "ADD"), exec("../outside/evil", "ADD"), exec("..", "ADD"), exec("evil", "ADD"),
            exec("bridge", "ADD\nLD_PRELOAD=" + evil), exec("bridge", "add")));
        for (int i = 0; i < 3; i++) {
            assertThat(r.get(i).u8()).as("FIND %d found", i).isZero();
        }
        assertThat(r.get(3).u8()).as("EXEC by path").isEqualTo(2);
        assertThat(r.get(4).u8()).as("EXEC by relative path").isEqualTo(2);
        assertThat(r.get(5).u8()).as("EXEC ..").isEqualTo(2);
        assertThat(r.get(6).u8()).as("EXEC of a name not on CNI_PATH: not found").isEqualTo(1);
        assertThat(r.get(6).i32()).isEqualTo(2);
        assertThat(r.get(7).u8()).as("EXEC with a command that is not a command").isEqualTo(2);
        assertThat(r.get(8).u8()).isEqualTo(2);
        assertThat(outside.resolve("pwned")).doesNotExist();
        assertThat(h.calls()).isEmpty();
    }

    @Test
    void delegateGetsTheRuntimesEnvironmentNotTheDaemonsWords() throws Exception {
        Path envDump = dir.resolve("env.dump");
        Path bin = h.bin.resolve("bridge");
        Files.writeString(bin, "#!/bin/sh\nenv > " + envDump + "\n");
        List<Wire.Frame> r = play(Map.of(), List.of(exec("bridge", "DEL")));
        assertThat(r.get(0).u8()).isZero();
        assertThat(r.get(0).i32()).isZero();
        List<String> env = Files.readAllLines(envDump);
        assertThat(env).contains("CNI_COMMAND=DEL", "CNI_CONTAINERID=" + PluginHarness.CONTAINER, "CNI_PATH=" + h.bin);
        assertThat(env).noneMatch(l -> l.startsWith("LD_"));
    }

    @Test
    void scratchStepsTouchOnlyTheFileTheLauncherNamesItself() throws Exception {
        Path target = outside.resolve("written");
        List<Wire.Frame> r = play(Map.of(), List.of(frame(write("evil")), frame(Wire.Builder.step(Wire.READ_SCRATCH))));
        assertThat(r.get(0).i32()).isZero();
        assertThat(r.get(1).u8()).isZero();
        r.get(1).i32();
        assertThat(new String(r.get(1).bytes(), StandardCharsets.UTF_8)).isEqualTo("evil");
        try (Stream<Path> all = Files.walk(dir)) {
            assertThat(all.filter(Files::isRegularFile).filter(p -> p.toString().contains("evil") || p.equals(target)))
                .containsExactly(outside.resolve("evil"));
        }
        assertThat(Files.readString(h.scratch())).isEqualTo("evil"); // its own scratch file: the daemon's to write
        try (Stream<Path> data = Files.list(h.dataDir)) {
            assertThat(data).containsExactly(h.scratch()); // no temporary file left
        }
    }

    @Test
    void containerIdThatIsAPathIsNoFileName() throws Exception {
        Path victim = outside.resolve("victim");
        Files.writeString(victim, "keep");
        String id = "../outside/victim";
        List<Wire.Frame> r = play(Map.of("CNI_CONTAINERID", id), List.of(frame(write("evil")),
            frame(Wire.Builder.step(Wire.READ_SCRATCH)), frame(Wire.Builder.step(Wire.REMOVE_SCRATCH))),
            List.of(Wire.Builder.step(Wire.REMOVE_SCRATCH), write("evil"))); // the done frame's steps: the same bounds
        assertThat(r.get(0).i32()).isEqualTo(22); // EINVAL
        assertThat(r.get(1).u8()).isEqualTo(2);
        assertThat(r.get(2).i32()).isEqualTo(22);
        assertThat(Files.readString(victim)).isEqualTo("keep");
    }

    @Test
    void dataDirectoryIsTheRuntimesNotTheDaemons() throws Exception {
        // the daemon cannot name a directory: a step carries none, and a relative JFLANNEL_CNI_DATA_DIR is ignored
        Map<String, String> env = Map.of("JFLANNEL_CNI_DATA_DIR", "relative/dir", "CNI_CONTAINERID", "x" + System.nanoTime());
        List<Wire.Frame> r = play(env, List.of(frame(Wire.Builder.step(Wire.READ_SCRATCH))));
        assertThat(r.get(0).u8()).isEqualTo(1); // looked in /var/lib/cni/flannel: no such file
        assertThat(dir.resolve("relative")).doesNotExist();
    }

    @Test
    void aFrameStopsAtItsFirstFailedStep() throws Exception {
        // a write that fails (the data directory is a file), then a delegate: the launcher runs no delegate
        Path notADir = Files.writeString(dir.resolve("not-a-dir"), "x");
        List<Wire.Frame> r = play(Map.of("JFLANNEL_CNI_DATA_DIR", notADir.toString()),
            List.of(frame(write("cfg"), findStep("bridge"), execStep("bridge", "ADD")),
                frame(findStep("absent"), execStep("bridge", "ADD")),
                frame(findStep("bridge"), execStep("bridge", "ADD"))));
        assertThat(performed.get(0)).as("steps performed after a failed write").isEqualTo(1);
        assertThat(r.get(0).i32()).isNotZero();
        assertThat(performed.get(1)).as("steps performed after FIND found nothing").isEqualTo(1);
        assertThat(r.get(1).u8()).isZero();
        assertThat(performed.get(2)).isEqualTo(2);
        assertThat(r.get(2).u8()).isEqualTo(1);
        r.get(2).string();
        assertThat(r.get(2).u8()).as("EXEC ran").isZero();
        assertThat(h.calls()).hasSize(1); // only the third frame's delegate ran
    }

    @Test
    void malformedOrUnknownStepEndsTheExchangeAndTheJvmRuns() throws Exception {
        long jvms = TestLauncher.shared().fallbacks();
        Path sock = dir.resolve("hostile.sock");
        try (ServerSocketChannel ss = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            ss.bind(UnixDomainSocketAddress.of(sock));
            Thread daemon = new Thread(() -> {
                try (SocketChannel c = ss.accept()) {
                    Wire.read(Channels.newInputStream(c), Wire.MAX_REQUEST);
                    frame(Wire.Builder.step(99)).writeTo(Channels.newOutputStream(c));
                } catch (Exception e) {
                    // the launcher hung up
                }
            }, "hostile-daemon");
            daemon.start();
            Map<String, String> env = new HashMap<>(h.env);
            env.put("CNI_COMMAND", "VERSION");
            env.put("JFLANNEL_CNI_SOCKET", sock.toString());
            PluginHarness.Outcome o = TestLauncher.shared().run(env, new byte[0]);
            daemon.join();
            assertThat(o.stdout()).isEqualTo(FlannelPlugin.VERSION_JSON);
        }
        assertThat(TestLauncher.shared().fallbacks()).isEqualTo(jvms + 1);
    }
}
