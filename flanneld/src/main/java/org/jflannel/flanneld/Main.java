package org.jflannel.flanneld;

import java.io.PrintStream;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.jflannel.flanneld.config.FlagParser;
import org.jflannel.flanneld.config.Options;
import org.jflannel.flanneld.daemon.Daemon;
import org.jflannel.flanneld.install.InstallCommand;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@code flanneld}: parses the flags and {@code FLANNELD_*} variables, then runs the {@link Daemon}.
 * Exit codes (REFERENCE §9.3): 0 after a clean stop, {@code -h} or {@code --version}; 1 for a bad
 * flag or variable (Ours), an invalid option, or any fatal start-up error. {@code install-cni-plugin} and
 * {@code install-cni-conf} are the init containers' subcommands ({@link InstallCommand}).
 */
public final class Main {
    private Main() {
    }

    public static void main(String[] args) {
        System.exit(run(List.of(args), System.getenv(), System.err));
    }

    static int run(List<String> args, Map<String, String> env, PrintStream err) {
        // the init containers' subcommands, before any flag parsing (their arguments are not flags)
        Optional<Integer> installed = InstallCommand.run(args, env, err);
        if (installed.isPresent()) {
            return installed.get();
        }
        FlagParser.Outcome outcome = FlagParser.parse(args, env);
        if (outcome instanceof FlagParser.Outcome.Help help) {
            err.print(help.text());
            return 0;
        }
        if (outcome instanceof FlagParser.Outcome.Version version) {
            err.println(version.version());
            return 0;
        }
        if (outcome instanceof FlagParser.Outcome.Failure failure) {
            err.println(failure.message());
            err.println(FlagParser.USAGE_HINT);
            return 1;
        }
        FlagParser.Outcome.Run run = (FlagParser.Outcome.Run) outcome;
        Options options = run.options();
        Logging.configure(options.verbosity());
        Logger log = LoggerFactory.getLogger(Main.class);
        log.info("CLI flags config: {}", options.toLogString());
        if (!run.ignoredArgs().isEmpty()) {
            log.warn("arguments after the flags are ignored args={}", run.ignoredArgs());
        }
        Optional<String> invalid = options.validationError();
        if (invalid.isPresent()) {
            log.error(invalid.get());
            return 1;
        }
        return new Daemon(options, env, args).run();
    }
}
