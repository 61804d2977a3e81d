package org.jflannel.flanneld.config;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import picocli.CommandLine;
import picocli.CommandLine.Model.OptionSpec;

/**
 * Command line and {@code FLANNELD_*} variables → {@link Options} (REFERENCE §1).
 *
 * <p>Go's flag syntax is implemented here ({@code -name} = {@code --name}; {@code --name=value} or
 * {@code --name value}; booleans {@code --name} or {@code --name=false}; parsing stops at the first
 * non-flag or {@code --}); picocli holds the flag model, the defaults and the help text and receives
 * canonical {@code --name=value} tokens. Variables apply after the command line, only to flags not
 * set there; empty values are ignored. The environment is a parameter: no global state.
 */
public final class FlagParser {
    public static final String ENV_PREFIX = "FLANNELD_";
    public static final String USAGE_HINT = "Run 'flanneld --help' for usage.";

    /** What the command line asks for. */
    public sealed interface Outcome {
        /** Start the daemon; {@code ignoredArgs} are the arguments after flag parsing stopped. */
        record Run(Options options, List<String> ignoredArgs) implements Outcome {
            public Run {
                ignoredArgs = List.copyOf(ignoredArgs);
            }
        }

        /** {@code -h}/{@code --help}: print {@code text} to stderr, exit 0. */
        record Help(String text) implements Outcome {
        }

        /** {@code --version}: print {@code version} to stderr, exit 0. */
        record Version(String version) implements Outcome {
        }

        /** Bad flag or variable (Ours: exit 1): print {@code message} and the usage hint to stderr. */
        record Failure(String message) implements Outcome {
        }
    }

    private FlagParser() {
    }

    public static Outcome parse(List<String> args, Map<String, String> env) {
        try {
            return parseOrThrow(args, env);
        } catch (CommandLine.PicocliException e) {
            // the canonical tokens are checked before picocli sees them, so this is a model/parser surprise;
            // it still must not escape as a stack trace (REFERENCE §1 Ours: message + usage hint, exit 1)
            return new Outcome.Failure(e.getMessage() == null ? e.toString() : e.getMessage());
        }
    }

    private static Outcome parseOrThrow(List<String> args, Map<String, String> env) {
        CommandLine cl = newCommandLine();
        Map<String, OptionSpec> byName = new LinkedHashMap<>();
        for (OptionSpec o : cl.getCommandSpec().options()) {
            byName.put(o.longestName().substring(2), o);
        }
        List<String> canonical = new ArrayList<>();
        Set<String> setOnCommandLine = new LinkedHashSet<>();
        int[] next = {0};
        Outcome early = commandLine(args, byName, canonical, setOnCommandLine, next, cl);
        if (early != null) {
            return early;
        }
        cl.parseArgs(canonical.toArray(String[]::new));
        if (((FlagSpec) cl.getCommand()).version) {
            return new Outcome.Version(version());
        }
        Outcome envError = environment(env, byName, setOnCommandLine, canonical);
        if (envError != null) {
            return envError;
        }
        CommandLine withEnv = newCommandLine();
        withEnv.parseArgs(canonical.toArray(String[]::new));
        return new Outcome.Run(((FlagSpec) withEnv.getCommand()).toOptions(), args.subList(next[0], args.size()));
    }

    /**
     * Go's {@code FlagSet.Parse}: turns the flags into canonical {@code --name=value} tokens; stops at
     * the first non-flag or {@code --} ({@code next[0]} is then the first ignored argument). Returns
     * help or a failure, or null to go on.
     */
    private static Outcome commandLine(List<String> args, Map<String, OptionSpec> byName, List<String> canonical,
                                       Set<String> seen, int[] next, CommandLine cl) {
        int i = 0;
        while (i < args.size()) {
            String s = args.get(i);
            if (s.length() < 2 || s.charAt(0) != '-') {
                break;
            }
            i++;
            if (s.equals("--")) {
                break;
            }
            String name = s.substring(s.charAt(1) == '-' ? 2 : 1);
            if (name.isEmpty() || name.charAt(0) == '-' || name.charAt(0) == '=') {
                return new Outcome.Failure("bad flag syntax: " + s);
            }
            String value = null;
            int eq = name.indexOf('=', 1);
            if (eq > 0) {
                value = name.substring(eq + 1);
                name = name.substring(0, eq);
            }
            OptionSpec option = byName.get(name);
            if (option == null) {
                return name.equals("h") || name.equals("help")
                        ? new Outcome.Help(cl.getUsageMessage(CommandLine.Help.Ansi.OFF))
                        : new Outcome.Failure("flag provided but not defined: -" + name);
            }
            if (isBoolean(option)) {
                value = value == null ? "true" : value; // a bare boolean never takes the next argument
            } else if (value == null && i < args.size()) {
                value = args.get(i++);
            } else if (value == null) {
                return new Outcome.Failure("flag needs an argument: -" + name);
            }
            String error = conversionError(option, value);
            if (error != null) {
                return new Outcome.Failure((isBoolean(option) ? "invalid boolean value " : "invalid value ") + quote(value)
                        + (isBoolean(option) ? " for -" : " for flag -") + name + ": " + error);
            }
            canonical.add("--" + name + "=" + value);
            seen.add(name);
        }
        next[0] = i;
        return null;
    }

    /** {@code FLANNELD_*} for the flags not set on the command line (never {@code --version}); empty values ignored. */
    private static Outcome environment(Map<String, String> env, Map<String, OptionSpec> byName, Set<String> seen,
                                       List<String> canonical) {
        for (Map.Entry<String, OptionSpec> e : byName.entrySet()) {
            if (seen.contains(e.getKey()) || e.getKey().equals("version")) {
                continue;
            }
            String variable = envName(e.getKey());
            String value = env.get(variable);
            if (value == null || value.isEmpty()) {
                continue;
            }
            String error = conversionError(e.getValue(), value);
            if (error != null) {
                return new Outcome.Failure("invalid value " + quote(value) + " for " + variable + ": " + error);
            }
            canonical.add("--" + e.getKey() + "=" + value);
        }
        return null;
    }

    /** {@code FLANNELD_} + name in upper case with {@code -} → {@code _}. */
    public static String envName(String flagName) {
        return ENV_PREFIX + flagName.toUpperCase(Locale.ROOT).replace('-', '_');
    }

    /** The usage text {@code -h} prints. */
    public static String usage() {
        return newCommandLine().getUsageMessage(CommandLine.Help.Ansi.OFF);
    }

    /** The version from the build (resource filtered by Maven), e.g. {@code v0.1.0-SNAPSHOT}. */
    public static String version() {
        try (InputStream in = FlagParser.class.getResourceAsStream("/flanneld-version.properties")) {
            Properties p = new Properties();
            if (in != null) {
                p.load(in);
            }
            return "v" + p.getProperty("version", "0.0.0-unknown");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static CommandLine newCommandLine() {
        CommandLine cl = new CommandLine(new FlagSpec());
        // Go's flag package: a single-valued flag given twice takes the last value (repeatable ones accumulate)
        cl.setOverwrittenOptionsAllowed(true);
        // Go takes the next argument as the value whatever it looks like (--etcd-prefix --ip-masq)
        cl.setAllowOptionsAsOptionParameters(true);
        // "--" is handled above; as a value (--etcd-prefix --) it is just a value. An argv string holds no NUL.
        cl.setEndOfOptionsDelimiter("\0");
        cl.registerConverter(Integer.class, GoValues::parseInt);
        cl.registerConverter(Integer.TYPE, GoValues::parseInt);
        cl.registerConverter(Boolean.class, GoValues::parseBool);
        cl.registerConverter(Boolean.TYPE, GoValues::parseBool);
        return cl;
    }

    private static boolean isBoolean(OptionSpec option) {
        return option.type() == boolean.class || option.type() == Boolean.class;
    }

    /** Go's error text for a value this flag cannot take, or null. */
    private static String conversionError(OptionSpec option, String value) {
        try {
            if (isBoolean(option)) {
                GoValues.parseBool(value);
            } else if (option.type() == int.class || option.type() == Integer.class) {
                GoValues.parseInt(value);
            }
            return null;
        } catch (IllegalArgumentException e) {
            return e.getMessage();
        }
    }

    /** Go's %q for the characters flag values contain in practice. */
    static String quote(String s) {
        StringBuilder sb = new StringBuilder("\"");
        for (char c : s.toCharArray()) {
            switch (c) {
                case '"' -> sb.append("\\\"");
                case '\\' -> sb.append("\\\\");
                case '\n' -> sb.append("\\n");
                case '\t' -> sb.append("\\t");
                default -> sb.append(c);
            }
        }
        return sb.append('"').toString();
    }
}
