package org.jflannel.testsupport.cluster;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * A background prober: one {@code ping -D} per ordered pair of distinct pods, from inside the
 * source pod's namespace, an echo every {@code interval}, each reply time-stamped by ping into its
 * own log file. Bounded twice: every ping stops by itself after {@code atMost} ({@code -w}, and a
 * count to match), and {@link #stop()} ends them all (SIGTERM by PID) and reads the replies back as
 * {@link PingTimeline}s. Traffic stays between the cluster's own namespaces.
 */
public final class ContinuousPings implements AutoCloseable {
    private record Probe(Pod from, Pod to, ManagedProcess ping) {
    }

    private final Instant start;
    private final List<Probe> probes;
    private boolean stopped;

    private ContinuousPings(Instant start, List<Probe> probes) {
        this.start = start;
        this.probes = probes;
    }

    /** Starts a ping for every ordered pair of distinct {@code pods}, logs under {@code logDir}. */
    public static ContinuousPings start(List<Pod> pods, Path logDir, Duration interval, Duration atMost) throws IOException {
        if (interval.toMillis() < 200) {
            throw new IllegalArgumentException("interval: at least 200 ms (ping's floor for a flood-free run), got " + interval);
        }
        Files.createDirectories(logDir);
        long seconds = Math.max(1, atMost.toSeconds());
        long count = seconds * 1000 / interval.toMillis() + 1;
        Instant start = Instant.now();
        List<Probe> probes = new ArrayList<>();
        try {
            for (Pod from : pods) {
                for (Pod to : pods) {
                    if (from == to) {
                        continue;
                    }
                    // bounded by -c alone: with -w (a deadline) iputils' ping ends at its first ICMP error, and a
                    // restart can send one (a node's route gone for a moment: "Destination Net Unreachable")
                    List<String> cmd = List.of("ip", "netns", "exec", from.namespace(), "ping", "-n", "-D", "-i",
                            String.valueOf(interval.toMillis() / 1000.0), "-W", "1", "-c", Long.toString(count), to.ip());
                    Path log = logDir.resolve("ping-" + from.namespace() + "-" + to.namespace() + ".log");
                    probes.add(new Probe(from, to, ManagedProcess.start("ping " + from.name() + " -> " + to.name(), cmd,
                            Map.of(), log)));
                }
            }
        } catch (IOException | RuntimeException e) {
            for (Probe p : probes) {
                terminateQuietly(p.ping());
            }
            throw e;
        }
        return new ContinuousPings(start, List.copyOf(probes));
    }

    public Instant started() {
        return start;
    }

    /** Stops every ping and returns each pair's replies (in the order the pairs were started). */
    public List<PingTimeline> stop() throws InterruptedException, IOException {
        if (stopped) {
            throw new IllegalStateException("continuous pings already stopped");
        }
        stopped = true;
        Instant stop = Instant.now();
        for (Probe p : probes) {
            p.ping().terminate();
        }
        List<PingTimeline> out = new ArrayList<>();
        for (Probe p : probes) {
            out.add(PingTimeline.parse(p.from(), p.to(), start, stop,
                    Files.readString(p.ping().log(), StandardCharsets.UTF_8)));
        }
        return out;
    }

    /** Ends whatever still runs (a test that failed before {@link #stop()}). */
    @Override
    public void close() {
        if (!stopped) {
            stopped = true;
            probes.forEach(p -> terminateQuietly(p.ping()));
        }
    }

    private static void terminateQuietly(ManagedProcess p) {
        try {
            p.terminate();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (RuntimeException e) {
            System.err.println("continuous pings: " + p + " not stopped: " + e);
        }
    }
}
