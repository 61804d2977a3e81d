package org.jflannel.backend.ipsec;

import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.jflannel.core.peers.HealTiming;

/**
 * How the backend runs charon and heals: {@code charonCommand} null finds charon as upstream does;
 * a wrapper may come first (the tests' {@code ip netns exec}). {@code stateDir} holds our strongswan.conf
 * (and charon's log when {@code charonLog}); {@code vici} is charon's socket (upstream: /var/run/charon.vici).
 */
public record IpsecSettings(List<String> charonCommand, Path stateDir, Path vici, boolean charonLog,
                            Duration charonStartTimeout, HealTiming timing) {
    public static IpsecSettings defaults() {
        return new IpsecSettings(null, Path.of("/run/flannel/ipsec"), CharonConf.DEFAULT_VICI, false, Duration.ofSeconds(30),
                new HealTiming(Duration.ofSeconds(10), Duration.ofMillis(200), Duration.ZERO, Duration.ZERO));
    }
}
