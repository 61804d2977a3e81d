package org.jflannel.cni;

import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Runs a delegate plugin the way upstream's invoke package does (REFERENCE §12 "Delegation"):
 * found along CNI_PATH, run with the caller's environment and only CNI_COMMAND changed, the config
 * on stdin (by the {@link Host}); a failure becomes the delegate's CNI error or one of invoke's texts.
 */
final class DelegateExec {

    private static final int BUSY_ATTEMPTS = 6;

    private final Map<String, String> env;
    private final PrintStream stderr;
    private final Host host;

    DelegateExec(Map<String, String> env, PrintStream stderr, Host host) {
        this.env = env;
        this.stderr = stderr;
        this.host = host;
    }

    /**
     * invoke.FindInPath over CNI_PATH, then the plugin found, run with {@code command}: returns its
     * stdout, or throws its error. Messages are not CNI errors (code 999 when returned).
     */
    byte[] call(String plugin, String command, byte[] config) throws CniException {
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
        Optional<Host.Launched> first = host.findAndRun(plugin, dirs, command, config);
        if (first.isEmpty()) {
            throw CniException.internal("failed to find plugin " + GoText.quote(plugin) + " in path [" + String.join(" ", dirs) + "]");
        }
        String pluginPath = first.get().path();
        Host.Launched launched = first.get();
        for (int attempt = 1; ; attempt++) {
            if (launched.failure() != null) {
                if (launched.failure().textFileBusy()) {
                    if (attempt >= BUSY_ATTEMPTS) {
                        return new byte[0]; // upstream gives up silently with empty output
                    }
                    pause();
                    launched = again(plugin, pluginPath, command, config); // found once, as invoke does
                    continue;
                }
                throw new CniException(0, "netplugin failed with no error message: fork/exec " + pluginPath + ": "
                    + launched.failure().getMessage());
            }
            Host.Ran ran = launched.ran();
            if (ran.exit() != 0) {
                throw pluginError(ran.exit(), ran.stdout(), ran.stderr());
            }
            if (ran.stderr().length > 0) {
                stderr.write(ran.stderr(), 0, ran.stderr().length); // upstream passes stderr on only on success
                stderr.flush();
            }
            return ran.stdout();
        }
    }

    private Host.Launched again(String plugin, String pluginPath, String command, byte[] config) throws CniException {
        try {
            return new Host.Launched(pluginPath, host.run(plugin, pluginPath, command, config), null);
        } catch (Host.StartFailure e) {
            return new Host.Launched(pluginPath, null, e);
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
