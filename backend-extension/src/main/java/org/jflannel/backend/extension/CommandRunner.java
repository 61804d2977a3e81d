package org.jflannel.backend.extension;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Runs one extension command as upstream's {@code runCmd} does: the argv from {@link GoCommand}
 * (variables from the daemon's environment, overridden by the per-call ones), that same merged
 * environment for the child, {@code stdin} plus a newline on its standard input, and stdout and
 * stderr together as its output, trimmed. Executed directly: no shell.
 *
 * <p>Ours: a command is given {@code timeout} and killed after it (upstream waits forever, which
 * would stop every later lease event behind one hung command).
 */
final class CommandRunner {
    /** What a command did: its exit code (-1: it could not be started or was killed) and its output. */
    record Result(int exitCode, String output) {
        boolean ok() {
            return exitCode == 0;
        }
    }

    static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(60);

    private final Map<String, String> baseEnv;
    private final Duration timeout;

    CommandRunner(Map<String, String> baseEnv, Duration timeout) {
        this.baseEnv = Map.copyOf(baseEnv);
        this.timeout = timeout;
    }

    static CommandRunner fromProcessEnvironment() {
        return new CommandRunner(System.getenv(), DEFAULT_TIMEOUT);
    }

    /** Runs {@code command} with {@code vars} set; never throws for the command's own failure. */
    Result run(String command, Map<String, String> vars, String stdin) throws InterruptedException {
        Map<String, String> env = new HashMap<>(baseEnv);
        env.putAll(vars);
        List<String> argv = GoCommand.argv(command, env);
        if (argv.isEmpty()) {
            return new Result(-1, "empty command");
        }
        ProcessBuilder pb = new ProcessBuilder(argv).redirectErrorStream(true);
        pb.environment().clear();
        pb.environment().putAll(env);
        Process p;
        try {
            p = pb.start();
        } catch (IOException e) {
            return new Result(-1, e.getMessage());
        }
        try (OutputStream in = p.getOutputStream()) {
            in.write((stdin + "\n").getBytes(StandardCharsets.UTF_8));
        } catch (IOException e) {
            // the command did not read its input (it may have exited already): not a failure of its own
        }
        OutputReader out = new OutputReader(p.getInputStream());
        out.start();
        if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            p.destroyForcibly();
            p.waitFor(5, TimeUnit.SECONDS);
            out.join(1000);
            return new Result(-1, ("killed after " + timeout.toSeconds() + " s; output: " + out.text()).trim());
        }
        out.join(timeout.toMillis());
        return new Result(p.exitValue(), out.text().strip());
    }

    /** Drains the child's combined output on its own thread, so a chatty command cannot block on a full pipe. */
    private static final class OutputReader extends Thread {
        private final InputStream in;
        private final java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();

        OutputReader(InputStream in) {
            super("extension-cmd-output");
            setDaemon(true);
            this.in = in;
        }

        @Override
        public void run() {
            try (in) {
                byte[] buf = new byte[4096];
                int n;
                while ((n = in.read(buf)) > 0) {
                    synchronized (bytes) {
                        bytes.write(buf, 0, n);
                    }
                }
            } catch (IOException e) {
                // the process went away: what was read stays
            }
        }

        String text() {
            synchronized (bytes) {
                return bytes.toString(StandardCharsets.UTF_8);
            }
        }
    }
}
