package org.jflannel.testsupport.cluster;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What the kernel of each node reported while something ran: one {@code ip -ts monitor link neigh
 * route} per node namespace (iproute2, the operator's own tool), its lines time-stamped, so a test can
 * tell whether an entry was deleted and written again in between two dumps that look the same (FDB
 * entries come as neighbour lines with the peer's address). Bounded by {@code timeout} and ended by
 * {@link #stop()} (SIGTERM by PID).
 */
public final class IpMonitor implements AutoCloseable {
    /** One line of {@code ip -ts monitor}: node, when (the kernel's event as ip saw it), the text after the stamp. */
    public record Event(String node, Instant at, String text) {
        /** An entry or device went away ({@code Deleted ...}). */
        public boolean deletion() {
            return text.startsWith("Deleted ");
        }

        /** The line names device {@code dev} ({@code dev flannel.1}, or a link line {@code 7: flannel.1:}). */
        public boolean concerns(String dev) {
            return text.contains("dev " + dev + " ") || text.endsWith("dev " + dev) || text.matches("(?:Deleted )?\\d+: "
                    + Pattern.quote(dev) + "[:@].*");
        }
    }

    /** {@code [2026-11-25T18:37:45.902397] text}: ip prints local time. */
    private static final Pattern LINE = Pattern.compile("^\\[(\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\d(?:\\.\\d+)?)] (.*)$");

    /** A route no one uses (TEST-NET-3, a private table, on lo): added and deleted to see that a monitor listens. */
    private static final String MARKER = "203.0.113.1";
    private static final String MARKER_TABLE = "97";

    private final Map<String, String> namespaces;
    private final Map<String, ManagedProcess> monitors;
    private boolean stopped;

    private IpMonitor(Map<String, String> namespaces, Map<String, ManagedProcess> monitors) {
        this.namespaces = Map.copyOf(namespaces);
        this.monitors = monitors;
    }

    /** Starts a monitor in each namespace of {@code namespacesByNode} (node name → namespace), logs under {@code logDir}. */
    public static IpMonitor start(Map<String, String> namespacesByNode, Path logDir, Duration atMost) throws IOException {
        Files.createDirectories(logDir);
        Map<String, ManagedProcess> out = new LinkedHashMap<>();
        try {
            for (Map.Entry<String, String> e : namespacesByNode.entrySet()) {
                List<String> cmd = List.of("ip", "netns", "exec", e.getValue(), "timeout", Long.toString(Math.max(1,
                        atMost.toSeconds())), "ip", "-ts", "monitor", "link", "neigh", "route");
                out.put(e.getKey(), ManagedProcess.start("ip monitor@" + e.getKey(), cmd, Map.of(),
                        logDir.resolve("ip-monitor-" + e.getKey() + ".log")));
            }
        } catch (IOException | RuntimeException e) {
            new IpMonitor(namespacesByNode, out).close();
            throw e;
        }
        return new IpMonitor(namespacesByNode, out);
    }

    /**
     * Waits until every monitor reports a marker route added and deleted in its namespace (in a table
     * no rule looks up), so an empty report afterwards means "nothing happened", not "not yet listening".
     */
    public void awaitListening(Duration within) throws Exception {
        for (Map.Entry<String, ManagedProcess> e : monitors.entrySet()) {
            String ns = namespaces.get(e.getKey());
            Wait.until("ip monitor on " + e.getKey() + " reports a marker route", within, () -> {
                if (!e.getValue().isAlive()) {
                    throw new Wait.Abort("ip monitor on " + e.getKey() + " exited: " + e.getValue().logTail(5));
                }
                for (String verb : List.of("replace", "del")) {
                    Cmd.run(Duration.ofSeconds(10), List.of("ip", "-n", ns, "route", verb, MARKER + "/32", "dev", "lo", "table",
                            MARKER_TABLE)).orThrow();
                }
                return e.getValue().logText().contains("Deleted " + MARKER + " dev lo table " + MARKER_TABLE);
            });
        }
    }

    /** Stops every monitor; returns what each reported, by node, in order. */
    public List<Event> stop() throws InterruptedException, IOException {
        if (stopped) {
            throw new IllegalStateException("ip monitors already stopped");
        }
        stopped = true;
        for (ManagedProcess p : monitors.values()) {
            p.terminate();
        }
        List<Event> events = new ArrayList<>();
        for (Map.Entry<String, ManagedProcess> e : monitors.entrySet()) {
            events.addAll(parse(e.getKey(), Files.readString(e.getValue().log(), StandardCharsets.UTF_8), ZoneId.systemDefault()));
        }
        return events;
    }

    /** The time-stamped lines of one monitor's output (others, e.g. a continuation without a stamp, and the marker left out). */
    static List<Event> parse(String node, String output, ZoneId zone) {
        List<Event> out = new ArrayList<>();
        for (String line : output.lines().toList()) {
            Matcher m = LINE.matcher(line);
            if (m.matches() && !m.group(2).contains(MARKER + " dev lo table " + MARKER_TABLE)) {
                out.add(new Event(node, LocalDateTime.parse(m.group(1)).atZone(zone).toInstant(), m.group(2).strip()));
            }
        }
        return out;
    }

    @Override
    public void close() {
        if (stopped) {
            return;
        }
        stopped = true;
        for (ManagedProcess p : monitors.values()) {
            try {
                p.terminate();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            } catch (RuntimeException e) {
                System.err.println("ip monitor: " + p + " not stopped: " + e);
            }
        }
    }
}
