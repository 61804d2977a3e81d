package org.jflannel.flanneld.testing;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * flanneld as a real process (the test class path, {@code org.jflannel.flanneld.Main}), optionally
 * behind a command prefix such as {@code ip netns exec <ns>}; stderr goes to a file the test reads.
 */
public final class DaemonProcess implements AutoCloseable {
    private final Process process;
    private final Path stderr;

    private DaemonProcess(Process process, Path stderr) {
        this.process = process;
        this.stderr = stderr;
    }

    public static DaemonProcess start(List<String> prefix, Map<String, String> env, String... args) throws IOException {
        List<String> cmd = new ArrayList<>(prefix);
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        cmd.addAll(List.of("-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp", System.getProperty("java.class.path"),
                "org.jflannel.flanneld.Main"));
        cmd.addAll(List.of(args));
        Path err = Files.createTempFile("flanneld", ".stderr");
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(err.toFile()).redirectOutput(ProcessBuilder.Redirect.DISCARD);
        pb.environment().keySet().removeIf(k -> k.startsWith("FLANNELD_") || k.equals("NODE_NAME"));
        pb.environment().putAll(env);
        return new DaemonProcess(pb.start(), err);
    }

    /** Waits for the exit (bounded); returns the exit code. */
    public int waitFor(Duration timeout) throws InterruptedException, IOException {
        if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new IOException("flanneld did not exit within " + timeout + "; stderr:\n" + stderr());
        }
        return process.exitValue();
    }

    public String stderr() throws IOException {
        return Files.readString(stderr, StandardCharsets.UTF_8);
    }

    /** Polls stderr every 100 ms until {@code condition} holds or {@code timeout} passes. */
    public boolean awaitStderr(Predicate<String> condition, Duration timeout) throws InterruptedException, IOException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (System.nanoTime() < deadline) {
            if (condition.test(stderr())) {
                return true;
            }
            if (!process.isAlive()) {
                return condition.test(stderr());
            }
            process.waitFor(100, TimeUnit.MILLISECONDS);
        }
        return false;
    }

    public long pid() {
        return process.pid();
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    /** SIGTERM to this process only (by PID). */
    public void terminate() {
        process.destroy();
    }

    @Override
    public void close() throws IOException {
        if (process.isAlive()) {
            process.destroyForcibly();
            try {
                process.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        Files.deleteIfExists(stderr);
    }
}
