package org.jflannel.backend.ipsec;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.jflannel.core.ConfigException;
import org.jflannel.core.peers.HealTiming;

/**
 * How the backend runs charon and heals: {@code charonCommand} null finds charon by {@code search} (upstream's
 * paths on the daemon's PATH) when the network registers; a wrapper may come first (the tests' {@code ip netns exec}).
 * {@code stateDir} holds our strongswan.conf (and charon's log when {@code charonLog}); {@code vici} is charon's
 * socket (upstream: /var/run/charon.vici); {@code privateRun} wraps the charon found in {@link #PRIVATE_RUN}.
 */
public record IpsecSettings(List<String> charonCommand, Path stateDir, Path vici, boolean charonLog,
                            Duration charonStartTimeout, HealTiming timing, boolean privateRun, CharonConf.Search search) {
    public IpsecSettings {
        charonCommand = charonCommand == null ? null : List.copyOf(charonCommand);
        search = search == null ? CharonConf.Search.upstream() : search;
    }

    public IpsecSettings(List<String> charonCommand, Path stateDir, Path vici, boolean charonLog,
                         Duration charonStartTimeout, HealTiming timing, boolean privateRun) {
        this(charonCommand, stateDir, vici, charonLog, charonStartTimeout, timing, privateRun, null);
    }

    /** Ours: a directory for our strongswan.conf and charon's VICI socket (instead of /var/run/charon.vici). */
    public static final String ENV_DIR = "JFLANNEL_IPSEC_DIR";
    /**
     * Ours, for several daemons on one machine (the test harness): {@code 1} starts charon in a mount namespace
     * of its own (util-linux's unshare) with {@link #ENV_DIR} mounted on its /run, so its pidfile (fixed at
     * /var/run/charon.pid), its socket and our conf are the node's own: charon sees them at /run/charon.pid,
     * /run/charon.vici and /run/strongswan.conf.
     */
    public static final String ENV_PRIVATE_RUN = "JFLANNEL_IPSEC_PRIVATE_RUN";
    /** The wrapper of {@link #ENV_PRIVATE_RUN}: charon's path follows as {@code $0}, the directory as {@code $1} ({@link #command}). */
    static final List<String> PRIVATE_RUN = List.of("unshare", "-m", "--propagation", "private",
            "sh", "-c", "mount --bind \"$1\" /run && exec \"$0\"");

    public static IpsecSettings defaults() {
        return new IpsecSettings(null, Path.of("/run/flannel/ipsec"), CharonConf.DEFAULT_VICI, false, Duration.ofSeconds(30),
                new HealTiming(Duration.ofSeconds(10), Duration.ofMillis(200), Duration.ZERO, Duration.ZERO), false);
    }

    /** The defaults, changed by {@link #ENV_DIR} and {@link #ENV_PRIVATE_RUN} in {@code env}; a bad value names its variable. */
    public static IpsecSettings fromEnv(Map<String, String> env) throws ConfigException {
        IpsecSettings d = defaults();
        String dir = env.get(ENV_DIR);
        Path state = d.stateDir();
        Path vici = d.vici();
        if (dir != null && !dir.isEmpty()) {
            if (!dir.startsWith("/")) {
                throw new ConfigException(ENV_DIR, "expected an absolute path, got \"" + dir + "\"");
            }
            state = Path.of(dir);
            vici = state.resolve("charon.vici");
        }
        String priv = env.getOrDefault(ENV_PRIVATE_RUN, "0");
        boolean privateRun = switch (priv) {
            case "0", "" -> false;
            case "1" -> {
                if (dir == null || dir.isEmpty()) {
                    throw new ConfigException(ENV_PRIVATE_RUN, "needs " + ENV_DIR + " (the directory mounted on charon's /run)");
                }
                yield true;
            }
            default -> throw new ConfigException(ENV_PRIVATE_RUN, "expected 0 or 1, got \"" + priv + "\"");
        };
        return new IpsecSettings(null, state, vici, d.charonLog(), d.charonStartTimeout(), d.timing(), privateRun,
                new CharonConf.Search(env.get("PATH"), CharonConf.PATHS));
    }

    /**
     * charon's command line: {@code charonCommand}, else the charon {@code search} finds (upstream's error when there
     * is none), wrapped for a private run.
     */
    List<String> command() throws java.io.IOException {
        if (charonCommand != null) {
            return charonCommand;
        }
        String charon = search.require().toString();
        if (!privateRun) {
            return List.of(charon);
        }
        List<String> cmd = new java.util.ArrayList<>(PRIVATE_RUN);
        cmd.add(charon);
        cmd.add(stateDir.toString());
        return List.copyOf(cmd);
    }

    /**
     * Where charon writes its pidfile, as this host sees it (its path is fixed when strongSwan is built: Debian's
     * /var/run/charon.pid; in a private run the node's directory is charon's /run). Null: unknown (a wrapper of the tests').
     */
    Path pidFile() {
        if (privateRun) {
            return stateDir.resolve("charon.pid");
        }
        return charonCommand == null ? Path.of("/var/run/charon.pid") : null;
    }
}
