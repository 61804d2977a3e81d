package org.jflannel.testsupport.cluster;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * Runs a short command to completion within a bound (stdout and stderr captured, optional stdin),
 * killing it by PID when the bound passes. The harness uses it for {@code ip netns exec}, the CNI
 * plugin, {@code etcdctl} and {@code ping}.
 */
public final class Cmd {

    /** What a finished command left behind. */
    public record Result(List<String> command, int exitCode, String stdout, String stderr) {
        public Result {
            command = List.copyOf(command);
        }

        public boolean ok() {
            return exitCode == 0;
        }

        /** Throws with the command, exit code and both outputs unless it exited 0. */
        public Result orThrow() throws IOException {
            if (exitCode != 0) {
                throw new IOException(String.join(" ", command) + " exited " + exitCode
                        + "\nstdout: " + stdout.strip() + "\nstderr: " + stderr.strip());
            }
            return this;
        }
    }

    private Cmd() {
    }

    public static Result run(Duration within, List<String> command) throws IOException, InterruptedException {
        return run(within, command, Map.of(), null);
    }

    /** Runs {@code command} with {@code env} added to ours, {@code stdin} (null = none) fed to it. */
    public static Result run(Duration within, List<String> command, Map<String, String> env, String stdin)
            throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder(command);
        pb.environment().putAll(env);
        Process p = pb.start();
        CompletableFuture<String> out = drain(p.getInputStream());
        CompletableFuture<String> err = drain(p.getErrorStream());
        try (var in = p.getOutputStream()) {
            if (stdin != null) {
                in.write(stdin.getBytes(StandardCharsets.UTF_8));
            }
        } catch (IOException closedEarly) {
            // the command exited without reading its input; its exit code tells the story
        }
        if (!p.waitFor(within.toMillis(), TimeUnit.MILLISECONDS)) {
            p.descendants().forEach(ProcessHandle::destroyForcibly);
            p.destroyForcibly();
            p.waitFor(5, TimeUnit.SECONDS);
            throw new IOException(String.join(" ", command) + ": no exit within " + within.toMillis() + " ms");
        }
        return new Result(command, p.exitValue(), get(out), get(err));
    }

    /** Reads a stream to its end on its own thread (not the common pool, which has one thread on 2 cores). */
    private static CompletableFuture<String> drain(InputStream s) {
        CompletableFuture<String> f = new CompletableFuture<>();
        Thread t = new Thread(() -> {
            try (s) {
                f.complete(new String(s.readAllBytes(), StandardCharsets.UTF_8));
            } catch (IOException e) {
                f.completeExceptionally(new UncheckedIOException(e));
            }
        }, "cmd-drain");
        t.setDaemon(true);
        t.start();
        return f;
    }

    private static String get(CompletableFuture<String> f) throws IOException, InterruptedException {
        try {
            return f.get(10, TimeUnit.SECONDS);
        } catch (ExecutionException | java.util.concurrent.TimeoutException e) {
            throw new IOException("cannot read command output", e);
        }
    }
}
