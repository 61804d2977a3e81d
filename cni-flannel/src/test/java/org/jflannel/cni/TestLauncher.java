package org.jflannel.cni;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;

/**
 * The real static launcher (packaging/src/launcher/flannel-launcher.c), compiled for the tests with
 * musl-gcc as packaging/plugin-file.sh does, with an empty payload and a bundle beside it whose
 * "loader" is a script that runs the plugin's Main on the test class path: so a fallback runs the
 * plugin's own JVM as in a real install, and leaves a line in {@link #fallbackLog()}.
 */
final class TestLauncher {

    static final Path SOURCE = Path.of("..", "packaging", "src", "launcher", "flannel-launcher.c").toAbsolutePath().normalize();
    private static final String ID = "000000000000";
    private static TestLauncher shared;

    final Path file;
    private final Path fallbackLog;

    private TestLauncher(Path dir) throws IOException, InterruptedException {
        this(dir, SOURCE);
    }

    /** A launcher compiled from {@code source} (another version's, for the version-skew test) in {@code dir}. */
    TestLauncher(Path dir, Path source) throws IOException, InterruptedException {
        Files.createDirectories(dir);
        this.file = dir.resolve("flannel");
        this.fallbackLog = dir.resolve("fallbacks.log");
        Path bin = dir.resolve("flannel.bin");
        String cc = Files.isExecutable(Path.of("/usr/bin/musl-gcc")) ? "musl-gcc" : "gcc";
        Process p = new ProcessBuilder(cc, "-static", "-Os", "-Wall", "-Wextra", "-Werror", "-Wno-format-truncation",
            "-o", bin.toString(), source.toString()).redirectErrorStream(true).start();
        String log = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (p.waitFor() != 0) {
            throw new IllegalStateException(cc + " failed:\n" + log);
        }
        byte[] launcher = Files.readAllBytes(bin);
        ByteBuffer trailer = ByteBuffer.allocate(48).order(ByteOrder.LITTLE_ENDIAN);
        trailer.put("JFLNPAY1".getBytes(StandardCharsets.US_ASCII)).putLong(launcher.length).putLong(0)
            .put(ID.getBytes(StandardCharsets.US_ASCII));
        Path tmp = dir.resolve("flannel.tmp");
        Files.write(tmp, launcher);
        Files.write(tmp, trailer.array(), StandardOpenOption.APPEND);
        Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rwxr-xr-x"));
        Files.move(tmp, file, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        Path loader = dir.resolve("jflannel-" + ID).resolve("jre").resolve("bin").resolve("ld-linux-x86-64.so.2");
        Files.createDirectories(loader.getParent());
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        Files.writeString(loader, "#!/bin/sh\necho \"$CNI_COMMAND\" >> '" + fallbackLog + "'\n"
            + "exec '" + java + "' -Xshare:auto -XX:TieredStopAtLevel=1 -cp '" + System.getProperty("java.class.path")
            + "' org.jflannel.cni.Main\n");
        Files.setPosixFilePermissions(loader, PosixFilePermissions.fromString("rwxr-xr-x"));
    }

    /** One per test JVM, under target/. */
    static synchronized TestLauncher shared() {
        if (shared == null) {
            try {
                shared = new TestLauncher(Path.of("target", "test-launcher-" + ProcessHandle.current().pid()).toAbsolutePath());
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            }
        }
        return shared;
    }

    /** How many times the plugin's own JVM ran (the fallback), so far. */
    long fallbacks() {
        try {
            return Files.exists(fallbackLog) ? Files.readAllLines(fallbackLog).size() : 0;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    Path fallbackLog() {
        return fallbackLog;
    }

    /** Runs the launcher with exactly {@code env} and {@code stdin}. */
    PluginHarness.Outcome run(Map<String, String> env, byte[] stdin) {
        try {
            ProcessBuilder pb = new ProcessBuilder(file.toString());
            pb.environment().clear();
            pb.environment().putAll(env);
            Process p = pb.start();
            ByteArrayOutputStream err = new ByteArrayOutputStream();
            Thread errReader = new Thread(() -> copy(p.getErrorStream(), err), "launcher-stderr");
            errReader.start();
            try (OutputStream in = p.getOutputStream()) {
                in.write(stdin);
            } catch (IOException e) {
                // the launcher may not read stdin (VERSION)
            }
            byte[] out = p.getInputStream().readAllBytes();
            int exit = p.waitFor();
            errReader.join();
            return new PluginHarness.Outcome(exit, new String(out, StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(e);
        }
    }

    private static void copy(InputStream in, ByteArrayOutputStream out) {
        try (in) {
            in.transferTo(out);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
