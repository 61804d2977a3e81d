package org.jflannel.backend.ipsec;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.jflannel.core.ConfigException;
import org.jflannel.core.peers.HealTiming;

/**
 * How the backend runs charon and heals: {@code charonCommand} null finds charon as upstream does;
 * a wrapper may come first (the tests' {@code ip netns exec}). {@code stateDir} holds our strongswan.conf
 * (and charon's log when {@code charonLog}); {@code vici} is charon's socket (upstream: /var/run/charon.vici).
 */
public record IpsecSettings(List<String> charonCommand, Path stateDir, Path vici, boolean charonLog,
                            Duration charonStartTimeout, HealTiming timing, boolean privateRun) {
    /** Ours: a directory for our strongswan.conf and charon's VICI socket (instead of /var/run/charon.vici). */
    public static final String ENV_DIR = "JFLANNEL_IPSEC_DIR";
    /**
     * Ours, for several daemons on one machine (the test harness): {@code 1} starts charon in a mount namespace
     * of its own (util-linux's unshare) with {@link #ENV_DIR} mounted on its /run, so its pidfile (fixed at
     * /var/run/charon.pid), its socket and our conf are the node's own: charon sees them at /run/charon.pid,
     * /run/charon.vici and /run/strongswan.conf.
     */
    public static final String ENV_PRIVATE_RUN = "JFLANNEL_IPSEC_PRIVATE_RUN";
    /** The wrapper of {@link #ENV_PRIVATE_RUN}: charon's path follows as {@code $0}, the directory as {@code $1}. */
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
        List<String> command = null;
        switch (priv) {
            case "0", "" -> { }
            case "1" -> {
                if (dir == null || dir.isEmpty()) {
                    throw new ConfigException(ENV_PRIVATE_RUN, "needs " + ENV_DIR + " (the directory mounted on charon's /run)");
                }
                Path charon = CharonConf.findExecutable(env.get("PATH")).orElseThrow(() -> new ConfigException(ENV_PRIVATE_RUN,
                        "No valid charon executable found at paths [charon " + String.join(" ", CharonConf.PATHS) + "]"));
                command = new java.util.ArrayList<>(PRIVATE_RUN);
                command.add(charon.toString());
                command.add(state.toString());
            }
            default -> throw new ConfigException(ENV_PRIVATE_RUN, "expected 0 or 1, got \"" + priv + "\"");
        }
        return new IpsecSettings(command, state, vici, d.charonLog(), d.charonStartTimeout(), d.timing(), command != null);
    }
}
