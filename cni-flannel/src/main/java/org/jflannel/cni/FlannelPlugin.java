package org.jflannel.cni;

import java.io.IOException;
import java.io.InputStream;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The plugin's dispatcher, upstream skel's pluginMain (REFERENCE §11.7, §12): checks the
 * environment and stdin in skel's order, gates versions per command, runs the command, and is
 * the one place where an error becomes CNI error JSON on stdout. Runs in-process with injected
 * environment and streams; returns the exit code instead of exiting.
 */
public final class FlannelPlugin {

    static final String VERSION_JSON = "{\"cniVersion\":\"1.1.0\",\"supportedVersions\":"
        + "[\"0.1.0\",\"0.2.0\",\"0.3.0\",\"0.3.1\",\"0.4.0\",\"1.0.0\",\"1.1.0\"]}\n";

    private static final String[] VARIABLES = {"CNI_COMMAND", "CNI_CONTAINERID", "CNI_NETNS", "CNI_IFNAME", "CNI_ARGS", "CNI_PATH"};

    private final Map<String, String> env;
    private final InputStream stdin;
    private final PrintStream stdout;
    private final PrintStream stderr;
    private final Host host;
    private String requestVersion = Protocol.LATEST;

    public FlannelPlugin(Map<String, String> env, InputStream stdin, PrintStream stdout, PrintStream stderr) {
        this(env, stdin, stdout, stderr, new LocalHost(Map.copyOf(env)));
    }

    /** With the host's effects performed by {@code host} (the fast path's {@link RemoteHost}). */
    FlannelPlugin(Map<String, String> env, InputStream stdin, PrintStream stdout, PrintStream stderr, Host host) {
        this.host = host;
        this.env = Map.copyOf(env);
        this.stdin = stdin;
        this.stdout = stdout;
        this.stderr = stderr;
    }

    /** Runs one command; 0 on success, 1 after printing an error. */
    public int run() {
        String cmd = env.getOrDefault("CNI_COMMAND", "");
        try {
            dispatch(cmd);
            return 0;
        } catch (CniException e) {
            if (e.code() == CniException.INVALID_ENVIRONMENT && cmd.isEmpty()) {
                about();
                return 0;
            }
            byte[] json = e.toJson(requestVersion);
            stdout.write(json, 0, json.length);
            stdout.flush();
            return 1;
        }
    }

    private void dispatch(String cmd) throws CniException {
        checkEnvironment(cmd);
        if (cmd.equals("VERSION")) {
            stdout.print(VERSION_JSON);
            stdout.flush();
            return;
        }
        byte[] input = readStdin();
        Object config = validateConfig(input);
        Invocation inv = new Invocation(env, input, config, stdout, stderr, host);
        switch (cmd) {
            case "ADD" -> {
                callChecked(inv, new AddCommand());
                checkNetns(inv);
            }
            case "DEL" -> {
                callChecked(inv, new DelCommand());
                checkNetns(inv);
            }
            case "CHECK" -> gated(inv, "CHECK", "0.4.0", new CheckCommand());
            case "GC" -> gated(inv, "GC", "1.1.0", new GcCommand());
            case "STATUS" -> gated(inv, "STATUS", "1.1.0", new StatusCommand());
            default -> throw new CniException(CniException.INVALID_ENVIRONMENT, "unknown CNI_COMMAND: " + cmd);
        }
    }

    /** skel: required variables per command, in order; container ID and interface name checked as read. */
    private void checkEnvironment(String cmd) throws CniException {
        List<String> missing = new ArrayList<>();
        for (String name : VARIABLES) {
            String value = env.getOrDefault(name, "");
            boolean required = name.equals("CNI_COMMAND") || isRequired(name, cmd);
            if (value.isEmpty()) {
                if (required) {
                    missing.add(name);
                }
            } else if (required && name.equals("CNI_CONTAINERID")) {
                Protocol.validateContainerId(value);
            } else if (required && name.equals("CNI_IFNAME")) {
                Protocol.validateInterfaceName(value);
            }
        }
        if (!missing.isEmpty()) {
            throw new CniException(CniException.INVALID_ENVIRONMENT, "required env variables [" + String.join(",", missing) + "] missing");
        }
    }

    private static boolean isRequired(String name, String cmd) {
        boolean container = cmd.equals("ADD") || cmd.equals("CHECK") || cmd.equals("DEL");
        return switch (name) {
            case "CNI_CONTAINERID", "CNI_IFNAME" -> container;
            case "CNI_NETNS" -> cmd.equals("ADD") || cmd.equals("CHECK");
            case "CNI_PATH" -> container || cmd.equals("GC") || cmd.equals("STATUS");
            default -> false;
        };
    }

    private byte[] readStdin() throws CniException {
        try {
            return stdin.readAllBytes();
        } catch (IOException e) {
            throw new CniException(CniException.IO_FAILURE, "error reading from stdin: " + e.getMessage());
        }
    }

    /** skel's validateConfig: JSON, then the network name. Remembers cniVersion for error JSON. */
    private Object validateConfig(byte[] input) throws CniException {
        Object tree;
        try {
            tree = GoJson.parse(input);
        } catch (GoJson.SyntaxException e) {
            throw new CniException(CniException.DECODING_FAILURE, "error unmarshall network config: " + e.getMessage());
        }
        if (tree != null && !(tree instanceof Map)) {
            throw new CniException(CniException.DECODING_FAILURE, "error unmarshall network config: json: cannot unmarshal "
                + GoDecode.kind(tree) + " into Go value of type struct { Name string \"json:\\\"name\\\"\" }");
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> obj = tree == null ? Map.of() : (Map<String, Object>) tree;
        if (GoDecode.field(obj, "cniVersion") instanceof String v && !v.isEmpty()) {
            requestVersion = v;
        }
        Object name = GoDecode.field(obj, "name");
        if (name != null && !(name instanceof String)) {
            throw new CniException(CniException.DECODING_FAILURE, "error unmarshall network config: json: cannot unmarshal "
                + GoDecode.kind(name) + " into Go struct field .name of type string");
        }
        if (name == null || ((String) name).isEmpty()) {
            throw new CniException(CniException.INVALID_CONFIG, "missing network name");
        }
        Protocol.validateNetworkName((String) name);
        return obj;
    }

    /** version.ConfigDecoder: the config's cniVersion, "" meaning 0.1.0. */
    private static String configVersion(Invocation inv) throws CniException {
        @SuppressWarnings("unchecked")
        Object v = GoDecode.field((Map<String, Object>) inv.config, "cniVersion");
        if (v != null && !(v instanceof String)) {
            throw new CniException(CniException.DECODING_FAILURE, "decoding version from network config: json: cannot unmarshal "
                + GoDecode.kind(v) + " into Go struct field .cniVersion of type string");
        }
        return v == null || ((String) v).isEmpty() ? "0.1.0" : (String) v;
    }

    /** skel's checkVersionAndCall. */
    private static void callChecked(Invocation inv, Command command) throws CniException {
        Protocol.checkSupported(configVersion(inv));
        try {
            command.run(inv);
        } catch (Host.LateFailure late) {
            throw late.failure(); // as if the effect had thrown it where it was asked for
        }
    }

    private static void gated(Invocation inv, String name, String minimum, Command command) throws CniException {
        Protocol.checkCommandAllowed(name, configVersion(inv), minimum);
        callChecked(inv, command);
    }

    /** skel runs this after ADD and DEL (so an ADD result may already be printed). */
    private void checkNetns(Invocation inv) throws CniException {
        String override = env.getOrDefault("CNI_NETNS_OVERRIDE", "");
        if (override.equalsIgnoreCase("true") || override.equals("1") || inv.netns.isEmpty()) {
            return;
        }
        if (host.isOwnNetns(inv.netns)) {
            throw new CniException(CniException.INVALID_NETNS, "plugin's netns and netns from CNI_NETNS should not be the same");
        }
    }

    private void about() {
        stderr.println("CNI Plugin flannel version " + BuildInfo.version() + " (linux/" + BuildInfo.arch() + ") commit " + BuildInfo.commit());
        stderr.println("CNI protocol versions supported: " + String.join(", ", Protocol.SUPPORTED));
        stderr.flush();
    }
}
