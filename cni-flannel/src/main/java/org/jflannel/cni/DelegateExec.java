package org.jflannel.cni;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * Runs a delegate plugin the way upstream's invoke package does (REFERENCE §12 "Delegation"):
 * found along CNI_PATH, run with the caller's environment and only CNI_COMMAND changed, the config
 * on stdin; a failure becomes the delegate's CNI error or one of invoke's texts.
 */
final class DelegateExec {

    private static final int BUSY_ATTEMPTS = 6;

    private final Map<String, String> env;
    private final PrintStream stderr;

    DelegateExec(Map<String, String> env, PrintStream stderr) {
        this.env = env;
        this.stderr = stderr;
    }

    /** invoke.FindInPath over CNI_PATH. Messages are not CNI errors (code 999 when returned). */
    String find(String plugin) throws CniException {
        if (plugin.isEmpty()) {
            throw CniException.internal("no plugin name provided");
        }
        if (plugin.indexOf('/') >= 0) {
            throw CniException.internal("invalid plugin name: " + plugin);
        }
        String cniPath = env.getOrDefault("CNI_PATH", "");
        List<String> dirs = cniPath.isEmpty() ? List.of() : List.of(cniPath.split(":", -1));
        if (dirs.isEmpty()) {
            throw CniException.internal("no paths provided");
        }
        for (String dir : dirs) {
            Path p = dir.isEmpty() ? Path.of(plugin) : Path.of(dir, plugin);
            if (Files.isRegularFile(p)) {
                return p.toString();
            }
        }
        throw CniException.internal("failed to find plugin " + GoText.quote(plugin) + " in path [" + String.join(" ", dirs) + "]");
    }

    /** Runs {@code plugin} with {@code command}; returns its stdout, or throws its error. */
    byte[] run(String pluginPath, String command, byte[] config) throws CniException {
        for (int attempt = 1; ; attempt++) {
            Process p;
            try {
                p = start(pluginPath, command);
            } catch (IOException e) {
                String msg = String.valueOf(e.getMessage());
                if (msg.contains("Text file busy")) {
                    if (attempt >= BUSY_ATTEMPTS) {
                        return new byte[0]; // upstream gives up silently with empty output
                    }
                    pause();
                    continue;
                }
                throw new CniException(0, "netplugin failed with no error message: fork/exec " + pluginPath + ": " + reason(msg));
            }
            return collect(p, config);
        }
    }

    private Process start(String pluginPath, String command) throws IOException {
        ProcessBuilder pb = new ProcessBuilder(pluginPath);
        Map<String, String> childEnv = pb.environment();
        childEnv.clear();
        childEnv.putAll(env);
        childEnv.put("CNI_COMMAND", command);
        return pb.start();
    }

    private byte[] collect(Process p, byte[] config) throws CniException {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        // an anonymous class, not a lambda: a lambda's first use costs the JVM a bootstrap per pod
        Thread errReader = new Thread("delegate-stderr") {
            @Override
            public void run() {
                copy(p.getErrorStream(), err);
            }
        };
        errReader.start();
        byte[] out;
        int exit;
        try {
            try (OutputStream in = p.getOutputStream()) {
                in.write(config);
            } catch (IOException e) {
                // the delegate may exit without reading stdin; its exit status tells the story
            }
            out = p.getInputStream().readAllBytes();
            exit = p.waitFor();
            errReader.join();
        } catch (IOException e) {
            throw CniException.internal("reading delegate output: " + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            p.destroyForcibly();
            throw CniException.internal("interrupted while waiting for the delegate");
        }
        if (exit != 0) {
            throw pluginError(exit, out, err.toByteArray());
        }
        if (err.size() > 0) {
            stderr.write(err.toByteArray(), 0, err.size()); // upstream passes stderr on only on success
            stderr.flush();
        }
        return out;
    }

    private static void copy(InputStream in, ByteArrayOutputStream out) {
        try (in) {
            in.transferTo(out);
        } catch (IOException e) {
            // stderr is informational only
        }
    }

    /** invoke's pluginErr. */
    static CniException pluginError(int exit, byte[] stdout, byte[] stderr) {
        String exitText = exit > 128 ? "signal: " + (exit - 128) : "exit status " + exit;
        if (stdout.length == 0) {
            if (stderr.length == 0) {
                return new CniException(0, "netplugin failed with no error message: " + exitText);
            }
            return new CniException(0, "netplugin failed: " + GoText.quote(new String(stderr, StandardCharsets.UTF_8)));
        }
        try {
            return ErrorJson.decode(stdout);
        } catch (CniException parseError) {
            return new CniException(0, "netplugin failed but error parsing its diagnostic message "
                + GoText.quote(new String(stdout, StandardCharsets.UTF_8)) + ": " + parseError.getMessage());
        }
    }

    /** "error=13, Permission denied" gives "permission denied", as Go's errno text. */
    private static String reason(String javaMessage) {
        int comma = javaMessage.indexOf(", ", javaMessage.indexOf("error="));
        String r = comma >= 0 ? javaMessage.substring(comma + 2) : javaMessage;
        return r.isEmpty() ? r : Character.toLowerCase(r.charAt(0)) + r.substring(1);
    }

    private static void pause() throws CniException {
        try {
            Thread.sleep(1000); // upstream waits a second between "text file busy" attempts
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw CniException.internal("interrupted while waiting for the delegate");
        }
    }

    /** Parses a delegate's stdout as a CNI error, as Go decodes into types.Error. */
    static final class ErrorJson {
        private ErrorJson() {
        }

        static CniException decode(byte[] stdout) throws CniException {
            Object tree;
            try {
                tree = GoJson.parse(stdout);
            } catch (GoJson.SyntaxException e) {
                throw CniException.internal(e.getMessage());
            }
            if (tree == null) {
                return new CniException(0, "");
            }
            if (!(tree instanceof Map)) {
                throw CniException.internal("json: cannot unmarshal " + GoDecode.kind(tree) + " into Go value of type types.Error");
            }
            @SuppressWarnings("unchecked")
            Map<String, Object> m = (Map<String, Object>) tree;
            GoDecode d = new GoDecode("Error");
            long code = 0;
            Object c = GoDecode.field(m, "code");
            if (c instanceof GoNumber n && n.asInt() != null && n.asInt() >= 0) {
                code = n.asInt();
            } else if (c instanceof GoNumber n) {
                d.fail("json: cannot unmarshal number " + n.text() + " into Go struct field Error.code of type uint");
            } else if (c != null) {
                d.mismatch(c, "code", "uint");
            }
            String msg = d.string(m, "msg", "");
            String details = d.string(m, "details", "");
            if (d.error() != null) {
                throw CniException.internal(d.error());
            }
            return new CniException(code, msg, details);
        }
    }
}
