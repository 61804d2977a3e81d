package org.jflannel.testsupport.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.jflannel.linuxnet.netns.NetNs;
import org.jflannel.testbase.NetnsPrivilege;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The sweep cleans up after a run whose owner died, and touches nothing that run did not record. */
@Tag("netns")
class StaleRunsIT {
    private final List<NetNs> made = new ArrayList<>();
    private final List<Process> started = new ArrayList<>();

    @BeforeEach
    void privileged() {
        NetnsPrivilege.require();
    }

    @AfterEach
    void cleanUp() throws Exception {
        for (Process p : started) {
            p.destroyForcibly();
        }
        for (NetNs ns : made) {
            ns.delete();
        }
    }

    @Test
    void runOfADeadOwnerIsRemovedWithTheProcessesInItsNamespaces(@TempDir Path base) throws Exception {
        ClusterNames names = ClusterNames.random();
        Path dir = Files.createDirectories(base.resolve("jflannel-" + names.id()));
        Files.writeString(dir.resolve(StaleRuns.OWNER), deadPid() + " 2026-01-01T00:00:00Z\n", StandardCharsets.UTF_8);
        NetNs recorded = ns(names.node(1));
        StaleRuns.recordNamespace(dir, recorded.name());
        NetNs unrecorded = ns(names.node(2)); // the run's prefix, but not in its list: not ours to delete
        Process inside = start("ip", "netns", "exec", recorded.name(), "sleep", "300");
        Process outside = start("ip", "netns", "exec", unrecorded.name(), "sleep", "300");

        List<String> lines = new ArrayList<>();
        StaleRuns.sweep(base, lines::add);

        assertThat(inside.waitFor(10, TimeUnit.SECONDS)).as("process in the recorded namespace killed").isTrue();
        assertThat(Path.of("/run/netns", recorded.name())).doesNotExist();
        assertThat(dir).doesNotExist();
        assertThat(outside.isAlive()).as("process in the unrecorded namespace").isTrue();
        assertThat(Path.of("/run/netns", unrecorded.name())).exists();
        assertThat(lines).containsExactly("removed stale run " + names.id() + " (owner gone): 1 namespaces");
    }

    @Test
    void runOfALiveOwnerIsLeftAlone(@TempDir Path base) throws Exception {
        ClusterNames names = ClusterNames.random();
        Path dir = Files.createDirectories(base.resolve("jflannel-" + names.id()));
        StaleRuns.claim(dir);
        NetNs recorded = ns(names.node(1));
        StaleRuns.recordNamespace(dir, recorded.name());

        StaleRuns.sweep(base, line -> { });

        assertThat(Path.of("/run/netns", recorded.name())).exists();
        assertThat(dir.resolve(StaleRuns.NAMESPACES)).exists();
    }

    private NetNs ns(String name) throws Exception {
        NetNs ns = NetNs.create(name);
        made.add(ns);
        return ns;
    }

    private Process start(String... cmd) throws Exception {
        Process p = new ProcessBuilder(cmd).start();
        started.add(p);
        return p;
    }

    /** The PID of a process that has exited (reuse within this test is vanishingly unlikely). */
    private static long deadPid() throws Exception {
        Process p = new ProcessBuilder("true").start();
        assertThat(p.waitFor(10, TimeUnit.SECONDS)).isTrue();
        return p.pid();
    }
}
