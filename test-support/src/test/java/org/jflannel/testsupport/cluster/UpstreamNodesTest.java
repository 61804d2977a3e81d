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
    void theBinariesAreLookedUpBesideTheProjectRoot(@TempDir Path tmp) throws Exception {
        Path root = Files.createDirectories(tmp.resolve("ci/clone"));
        Path dir = Files.createDirectories(tmp.resolve("ci/shared/upstream"));
        assertThat(UpstreamFlannel.dir(root)).isEqualTo(dir);

        Path bin = Files.createFile(dir.resolve("flanneld"));
        bin.toFile().setExecutable(true);
        assertThat(UpstreamFlannel.flanneld(root)).isEqualTo(bin);
    }

    @Test
    void aMissingBinaryFailsUnderTheIntegrationProfileNamingThePathAndSkipsElsewhere(@TempDir Path tmp) {
        Path root = tmp.resolve("clone");
        String expected = tmp.resolve("shared/upstream/flanneld").toString();
        String was = System.getProperty("jflannel.integration");
        try {
            System.setProperty("jflannel.integration", "true");
            assertThatThrownBy(() -> UpstreamFlannel.flanneld(root)).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("upstream flanneld missing or not executable: " + expected);
            System.setProperty("jflannel.integration", "false");
            assertThatThrownBy(() -> UpstreamFlannel.flanneld(root)).isInstanceOf(TestAbortedException.class)
                    .hasMessageContaining(expected);
        } finally {
            if (was == null) {
                System.clearProperty("jflannel.integration");
            } else {
                System.setProperty("jflannel.integration", was);
            }
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
