package org.jflannel.testsupport.cluster;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.concurrent.TimeUnit;

/**
 * A long-running child process the harness started (etcd, flanneld, the mock API server): its
 * output goes to a log file, and it is ended only through its own PID (SIGTERM or SIGKILL), together
 * with any children it started itself. Nothing here ever signals a process the harness did not start.
 */
public final class ManagedProcess {
    private static final Duration STOP_WITHIN = Duration.ofSeconds(10);

    private final String name;
    private final Process process;
    private final Path log;

    private ManagedProcess(String name, Process process, Path log) {
        this.name = name;
        this.process = process;
        this.log = log;
    }

    /** Starts {@code command} with {@code env} added, stdout and stderr appended to {@code log}. */
    public static ManagedProcess start(String name, List<String> command, Map<String, String> env, Path log)
            throws IOException {
        Files.createDirectories(log.toAbsolutePath().getParent());
        ProcessBuilder pb = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()));
        pb.environment().putAll(env);
        return new ManagedProcess(name, pb.start(), log);
    }

    /** Like {@link #start} but with stdin and stdout kept as pipes (for a line protocol); stderr to {@code log}. */
    static ManagedProcess startPiped(String name, List<String> command, Map<String, String> env, Path log)
            throws IOException {
        Files.createDirectories(log.toAbsolutePath().getParent());
        ProcessBuilder pb = new ProcessBuilder(command)
                .redirectError(ProcessBuilder.Redirect.appendTo(log.toFile()));
        pb.environment().putAll(env);
        return new ManagedProcess(name, pb.start(), log);
    }

    public String name() {
        return name;
    }

    public long pid() {
        return process.pid();
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    Process process() {
        return process;
    }

    public Path log() {
        return log;
    }

    /** The exit code once the process has ended, empty while it runs. */
    public OptionalInt exitCode() {
        return process.isAlive() ? OptionalInt.empty() : OptionalInt.of(process.exitValue());
    }

    /** Waits up to {@code within} for the process to exit by itself; returns its exit code, empty if it still runs. */
    public OptionalInt awaitExit(Duration within) throws InterruptedException {
        if (process.waitFor(within.toMillis(), TimeUnit.MILLISECONDS)) {
            return OptionalInt.of(process.exitValue());
        }
        return OptionalInt.empty();
    }

    /** SIGKILL to the process (and its own children), then waits until it is gone. */
    public void kill() throws InterruptedException {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
        if (!process.waitFor(STOP_WITHIN.toMillis(), TimeUnit.MILLISECONDS)) {
            throw new IllegalStateException(name + " pid=" + pid() + " still alive after SIGKILL");
        }
    }

    /** SIGTERM, then SIGKILL if it has not exited within 10 s; returns the exit code. */
    public int terminate() throws InterruptedException {
        if (process.isAlive()) {
            process.destroy();
            if (!process.waitFor(STOP_WITHIN.toMillis(), TimeUnit.MILLISECONDS)) {
                kill();
            }
        }
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        return process.exitValue();
    }

    /** Everything the process logged so far (empty when the log does not exist). */
    public String logText() {
        try {
            return Files.exists(log) ? Files.readString(log, StandardCharsets.UTF_8) : "";
        } catch (IOException e) {
            return "(cannot read " + log + ": " + e.getMessage() + ")";
        }
    }

    /** The last {@code n} lines of the log, for error messages. */
    public String logTail(int n) {
        List<String> lines = logText().lines().toList();
        return String.join("\n", lines.subList(Math.max(0, lines.size() - n), lines.size()));
    }

    @Override
    public String toString() {
        return name + " pid=" + pid();
    }
}
