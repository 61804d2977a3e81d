package org.jflannel.linuxnet;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

/** Runs a witness command with a time bound; non-zero exit is an error carrying its output. */
public final class Cmd {
    private Cmd() {
    }

    public static String run(String... cmd) throws IOException, InterruptedException {
        Result r = tryRun(cmd);
        if (r.exit() != 0) {
            throw new IOException(String.join(" ", cmd) + " exited " + r.exit() + ": " + r.output());
        }
        return r.output();
    }

    public record Result(int exit, String output) {
    }

    public static Result tryRun(String... cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        if (!p.waitFor(20, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            throw new IOException(String.join(" ", cmd) + ": timed out");
        }
        return new Result(p.exitValue(), new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
    }
}
