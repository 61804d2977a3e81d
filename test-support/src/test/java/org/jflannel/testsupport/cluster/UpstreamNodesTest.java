package org.jflannel.testsupport.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Files;
import java.nio.file.Path;
import org.jflannel.testsupport.cluster.ClusterOptions.Mode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.opentest4j.TestAbortedException;

/** The harness's upstream-node choice: options, the binary's locator, the counters read beside it. */
class UpstreamNodesTest {

    @Test
    void upstreamNodesAreChosenByNumberAndTheOthersRunOurs() {
        ClusterOptions o = ClusterOptions.defaults().withUpstreamNodes(2);
        assertThat(o.kindOf(1)).isEqualTo(NodeKind.JFLANNEL);
        assertThat(o.kindOf(2)).isEqualTo(NodeKind.UPSTREAM);
        assertThat(o.kindOf(3)).isEqualTo(NodeKind.JFLANNEL);
        assertThat(ClusterOptions.defaults().upstreamNodes()).isEmpty();
        assertThat(o.withBackend("udp").withNodes(2).upstreamNodes()).containsExactly(2);
    }

    @Test
    void anUpstreamNodeOutsideTheClusterOrInKubeModeIsRefusedNamingTheField() {
        assertThatThrownBy(() -> ClusterOptions.defaults().withUpstreamNodes(4))
                .hasMessage("upstream nodes: expected node numbers 1..3, got 4");
        assertThatThrownBy(() -> ClusterOptions.defaults().withUpstreamNodes(1).withMode(Mode.KUBE))
                .hasMessage("upstream nodes: only in etcd mode, got mode KUBE");
    }

    @Test
    void theDataFilesAreLookedUpBesideTheProjectRoot(@TempDir Path tmp) throws Exception {
        Path root = Files.createDirectories(tmp.resolve("ci/clone"));
        Path dir = Files.createDirectories(tmp.resolve("ci/shared/upstream"));
        assertThat(UpstreamFlannel.dataDir(root)).isEqualTo(dir);
    }

    @Test
    void withoutTheVariableEveryUpstreamBinarySkipsNamingItAndTheVariableUnderTheIntegrationProfileToo() {
        withIntegration("true", () -> {
            assertThatThrownBy(() -> UpstreamFlannel.flanneld(null)).isInstanceOf(TestAbortedException.class)
                    .hasMessage("skipped: needs upstream's flanneld v0.20.2: set JFLANNEL_UPSTREAM_DIR to a folder holding "
                            + "upstream's flanneld (v0.20.2) and flannel (v1.9.1)");
            assertThatThrownBy(() -> UpstreamFlannel.flanneld(" ")).isInstanceOf(TestAbortedException.class);
        });
    }

    @Test
    void aMissingFileSkipsNamingThePath(@TempDir Path tmp) {
        withIntegration("true", () -> assertThatThrownBy(() -> UpstreamFlannel.flanneld(tmp.toString()))
                .isInstanceOf(TestAbortedException.class)
                .hasMessageContaining("needs upstream's flanneld v0.20.2: no file " + tmp.resolve("flanneld")));
    }

    @Test
    void theFlanneldOfTheExpectedVersionIsTakenFromTheFolder(@TempDir Path tmp) throws Exception {
        Path bin = script(tmp, "flanneld", "echo v0.20.2 >&2");
        withIntegration("true", () -> assertThat(UpstreamFlannel.flanneld(tmp.toString())).isEqualTo(bin));
    }

    @Test
    void aFlanneldOfAnotherVersionOrNotExecutableFailsUnderTheIntegrationProfileAndSkipsElsewhere(@TempDir Path tmp)
            throws Exception {
        Path other = Files.createDirectories(tmp.resolve("other"));
        script(other, "flanneld", "echo v0.28.9 >&2");
        Path plain = Files.createDirectories(tmp.resolve("plain"));
        Files.writeString(plain.resolve("flanneld"), "not a program");
        withIntegration("true", () -> {
            assertThatThrownBy(() -> UpstreamFlannel.flanneld(other.toString())).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("says its version is \"v0.28.9\", the interop tests expect v0.20.2");
            assertThatThrownBy(() -> UpstreamFlannel.flanneld(plain.toString())).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining(plain.resolve("flanneld") + " is not an executable file");
        });
        withIntegration("false", () -> assertThatThrownBy(() -> UpstreamFlannel.flanneld(other.toString()))
                .isInstanceOf(TestAbortedException.class).hasMessageContaining("v0.28.9"));
    }

    private static Path script(Path dir, String name, String body) throws Exception {
        Path bin = dir.resolve(name);
        Files.writeString(bin, "#!/bin/sh\n" + body + "\n");
        assertThat(bin.toFile().setExecutable(true)).isTrue();
        return bin;
    }

    private static void withIntegration(String value, Runnable body) {
        String was = System.getProperty("jflannel.integration");
        String dir = System.getProperty(UpstreamFlannel.PROPERTY);
        try {
            System.setProperty("jflannel.integration", value);
            System.clearProperty(UpstreamFlannel.PROPERTY);
            body.run();
        } finally {
            restore("jflannel.integration", was);
            restore(UpstreamFlannel.PROPERTY, dir);
        }
    }

    private static void restore(String key, String value) {
        if (value == null) {
            System.clearProperty(key);
        } else {
            System.setProperty(key, value);
        }
    }

    @Test
    void udpCountersAreReadByNameFromProcNetSnmp() throws Exception {
        String snmp = """
                Ip: Forwarding DefaultTTL
                Ip: 1 64
                Udp: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors IgnoredMulti MemErrors
                Udp: 32452 3 7609 40061 7606 0 2 0 0
                UdpLite: InDatagrams NoPorts InErrors OutDatagrams RcvbufErrors SndbufErrors InCsumErrors IgnoredMulti MemErrors
                UdpLite: 0 0 0 0 0 0 0 0 0
                """;
        UdpSnmp u = UdpSnmp.parse(snmp);
        assertThat(u).isEqualTo(new UdpSnmp(32452, 3, 7609, 7606, 2));
        assertThat(u.minus(new UdpSnmp(452, 3, 9, 6, 2))).isEqualTo(new UdpSnmp(32000, 0, 7600, 7600, 0));
        assertThatThrownBy(() -> UdpSnmp.parse("Ip: 1 64\n")).hasMessageContaining("expected two Udp: lines");
    }

    @Test
    void linkStatsSubtract() {
        LinkStats before = new LinkStats("flannel0", 10, 20, 1, 2);
        assertThat(new LinkStats("flannel0", 15, 27, 1, 5).minus(before)).isEqualTo(new LinkStats("flannel0", 5, 7, 0, 3));
    }
}
