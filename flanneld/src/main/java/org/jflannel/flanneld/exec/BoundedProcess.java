package org.jflannel.flanneld.exec;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs a rule tool ({@code iptables-restore}, {@code nft}, ...) once: the payload on stdin, stdout
 * and stderr together into a temporary file (so that a process that hangs cannot block us beyond
 * the time limit on a full pipe), killed when it outlives the limit.
 */
public final class BoundedProcess {
    /** Exit status and combined stdout/stderr. */
    public record Result(int status, String output) {
    }

    /** The process could not be started (the binary is missing or not executable); the cause says why. */
    public static final class NotStartedException extends IOException {
        private static final long serialVersionUID = 1L;

        NotStartedException(IOException cause) {
            super(cause.getMessage(), cause);
        }
    }

    private BoundedProcess() {
    }

    /** {@code stdin} may be null (nothing written); throws when the process does not exit within {@code limit}. */
    public static Result run(List<String> command, String stdin, Duration limit) throws IOException, InterruptedException {
        Path output = Files.createTempFile("flanneld-" + Path.of(command.get(0)).getFileName(), ".out");
        try {
            Process p;
            try {
                p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile()).start();
            } catch (IOException e) {
                throw new NotStartedException(e);
            }
            try (OutputStream in = p.getOutputStream()) {
                if (stdin != null) {
                    in.write(stdin.getBytes(StandardCharsets.UTF_8));
                }
            }
            if (!p.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS)) {
                p.destroyForcibly();
                throw new IOException(String.join(" ", command) + ": no exit within " + limit.toSeconds() + " s");
            }
            return new Result(p.exitValue(), Files.readString(output, StandardCharsets.UTF_8));
        } finally {
            Files.deleteIfExists(output);
        }
    }
}
