package org.jflannel.e2e;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.jflannel.testsupport.cluster.ClusterOptions;
import org.jflannel.testsupport.cluster.ManagedProcess;
import org.jflannel.testsupport.cluster.NetnsCluster;
import org.jflannel.testbase.NetnsPrivilege;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The harness leaves nothing behind: not after close(), and not after a start that failed half-way. */
@Tag("e2e")
class NetnsClusterCleanupIT {
    private static final Path NETNS = Path.of("/run/netns");

    @BeforeEach
    void privileged() {
        NetnsPrivilege.require(); // root; fails (never skips) under -Pintegration
    }

    @Test
    void closeKillsItsProcessesAndRemovesItsNamespacesAndRunDirectory(@TempDir Path runBase) throws Exception {
        NetnsCluster cluster = NetnsCluster.start(ClusterOptions.defaults().withNodes(1).withPodsPerNode(1)
                .withRunBase(runBase));
        List<String> namespaces = cluster.namespaces();
        List<ManagedProcess> processes = cluster.processes();
        Path runDir = cluster.runDir();
        assertThat(namespaces).hasSize(3).allSatisfy(ns -> assertThat(NETNS.resolve(ns)).exists());
        assertThat(processes).hasSize(2).allSatisfy(p -> assertThat(p.isAlive()).as("%s alive", p).isTrue());
        assertThat(runDir).isDirectory();

        cluster.close();

        assertThat(namespaces).allSatisfy(ns -> assertThat(NETNS.resolve(ns)).doesNotExist());
        assertThat(processes).allSatisfy(p -> assertThat(ProcessHandle.of(p.pid()).filter(ProcessHandle::isAlive))
                .as("%s after close", p).isEmpty());
        assertThat(runDir).doesNotExist();
    }

    @Test
    void startThatFailsHalfWayRemovesWhatItMadeAndSaysWhy(@TempDir Path runBase) throws Exception {
        Set<String> before = namespacesNow();
        assertThatThrownBy(() -> NetnsCluster.start(ClusterOptions.defaults().withNodes(1).withBackend("nonsense")
                .withRunBase(runBase)))
                .satisfies(e -> System.out.println("start failed as expected: " + e))
                .hasMessageContaining("flanneld on node1 exited 1")
                .hasMessageContaining("nonsense");
        Set<String> added = namespacesNow();
        added.removeAll(before);
        assertThat(added.stream().filter(ns -> ns.matches("jf[a-z0-9]{5}(fab|n\\d+(p\\d)?)")))
                .as("namespaces of the failed run").isEmpty();
        try (Stream<Path> left = Files.list(runBase)) {
            assertThat(left).as("run directories left").isEmpty();
        }
    }

    private static Set<String> namespacesNow() throws Exception {
        try (Stream<Path> s = Files.list(NETNS)) {
            return new HashSet<>(s.map(p -> p.getFileName().toString()).toList());
        }
    }
}
