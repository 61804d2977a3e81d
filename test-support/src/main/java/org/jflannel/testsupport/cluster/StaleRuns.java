package org.jflannel.testsupport.cluster;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.jflannel.linuxnet.netns.NetNs;

/**
 * What a run leaves in its directory so a later run can clean up after it if it was killed without
 * running its cleanup (SIGKILL, a forked test JVM killed on timeout): {@code owner} (PID and start
 * time of the harness JVM) and {@code namespaces} (one line per namespace it created, written before
 * anything is put into it). The sweep touches only runs whose owner is gone, and of those only the
 * namespaces they recorded: it kills the processes that live in those namespaces (by PID), deletes
 * the namespaces, then the directory. Nothing else on the machine is looked at.
 */
final class StaleRuns {
    static final String OWNER = "owner";
    static final String NAMESPACES = "namespaces";
    private static final String DIR_PATTERN = "jflannel-[a-z0-9]{5}";

    private StaleRuns() {
    }

    /** Records the calling JVM as the owner of {@code runDir}. */
    static void claim(Path runDir) throws IOException {
        ProcessHandle self = ProcessHandle.current();
        Files.writeString(runDir.resolve(OWNER), self.pid() + " " + startOf(self).map(Instant::toString).orElse("?")
                + "\n", StandardCharsets.UTF_8);
    }

    /** Appends {@code ns} to the run's namespace list (before the namespace gets any content). */
    static void recordNamespace(Path runDir, String ns) throws IOException {
        Files.writeString(runDir.resolve(NAMESPACES), ns + "\n", StandardCharsets.UTF_8,
                StandardOpenOption.CREATE, StandardOpenOption.APPEND, StandardOpenOption.SYNC);
    }

    /** Cleans up every run under {@code runBase} whose owner is no longer alive. */
    static void sweep(Path runBase, Consumer<String> progress) throws IOException {
        if (!Files.isDirectory(runBase)) {
            return;
        }
        List<Path> stale = new ArrayList<>();
        try (Stream<Path> dirs = Files.list(runBase)) {
            dirs.filter(d -> d.getFileName().toString().matches(DIR_PATTERN))
                    .filter(d -> Files.isRegularFile(d.resolve(OWNER), LinkOption.NOFOLLOW_LINKS))
                    .filter(d -> !ownerAlive(d))
                    .forEach(stale::add);
        }
        for (Path dir : stale) {
            String id = dir.getFileName().toString().substring("jflannel-".length());
            List<String> namespaces = recordedNamespaces(dir, id);
            for (String ns : namespaces) {
                killProcessesIn(ns);
                NetNs.delete(ns);
            }
            deleteTree(dir);
            progress.accept("removed stale run " + id + " (owner gone): " + namespaces.size() + " namespaces");
        }
    }

    /** The recorded namespaces that carry that run's prefix; anything else in the file is ignored. */
    private static List<String> recordedNamespaces(Path dir, String id) throws IOException {
        Path list = dir.resolve(NAMESPACES);
        if (!Files.exists(list)) {
            return List.of();
        }
        String prefix = new ClusterNames(id).prefix();
        List<String> out = new ArrayList<>(Files.readAllLines(list, StandardCharsets.UTF_8).stream()
                .map(String::strip).filter(ns -> ns.startsWith(prefix) && ns.matches("[a-z0-9]{1,15}")).toList());
        java.util.Collections.reverse(out); // pods before nodes before the fabric
        return out;
    }

    private static boolean ownerAlive(Path dir) {
        try {
            String[] f = Files.readString(dir.resolve(OWNER), StandardCharsets.UTF_8).strip().split(" ");
            Optional<ProcessHandle> p = ProcessHandle.of(Long.parseLong(f[0]));
            return p.isPresent() && p.get().isAlive()
                    && (f.length < 2 || startOf(p.get()).map(Instant::toString).orElse("?").equals(f[1]));
        } catch (IOException | RuntimeException unreadable) {
            return true; // when in doubt, leave it alone
        }
    }

    /** Kills, by PID, every process whose network namespace is {@code /run/netns/<ns>}. */
    private static void killProcessesIn(String ns) throws IOException {
        Path nsFile = Path.of("/run/netns", ns);
        if (!Files.exists(nsFile)) {
            return;
        }
        Object key = Files.readAttributes(nsFile, java.nio.file.attribute.BasicFileAttributes.class).fileKey();
        try (Stream<Path> procs = Files.list(Path.of("/proc"))) {
            procs.filter(p -> p.getFileName().toString().matches("\\d+"))
                    .filter(p -> sameNamespace(p.resolve("ns/net"), key))
                    .forEach(p -> ProcessHandle.of(Long.parseLong(p.getFileName().toString()))
                            .ifPresent(ProcessHandle::destroyForcibly));
        }
    }

    private static boolean sameNamespace(Path procNs, Object key) {
        try {
            return key != null && key.equals(Files.readAttributes(procNs,
                    java.nio.file.attribute.BasicFileAttributes.class).fileKey());
        } catch (IOException | RuntimeException goneOrForeign) {
            return false;
        }
    }

    private static Optional<Instant> startOf(ProcessHandle p) {
        return p.info().startInstant();
    }

    static void deleteTree(Path dir) throws IOException {
        if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        try (Stream<Path> s = Files.walk(dir)) {
            for (Path p : s.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        }
    }
}
