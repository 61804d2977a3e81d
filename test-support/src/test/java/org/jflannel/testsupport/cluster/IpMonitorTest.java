package org.jflannel.testsupport.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Instant;
import java.time.ZoneOffset;
import java.util.List;
import org.junit.jupiter.api.Test;

class IpMonitorTest {
    /** Lines as {@code ip -ts monitor link neigh route} printed them for a neighbour, an FDB entry and a route. */
    private static final String OUTPUT = """
            [2026-11-25T18:37:45.700000] 203.0.113.1 dev lo table 97 scope link
            [2026-11-25T18:37:45.700100] Deleted 203.0.113.1 dev lo table 97 scope link
            [2026-11-25T18:37:45.768674] 10.244.1.0 dev flannel.1 lladdr 02:00:00:00:00:01 PERMANENT
            [2026-11-25T18:37:45.882173] 10.244.1.0/24 via 10.244.1.0 dev flannel.1 onlink
            [2026-11-25T18:37:45.899997] 192.0.2.12 dev flannel.1 lladdr 02:00:00:00:00:01 NOARP PERMANENT
            [2026-11-25T18:37:45.902375] 10.244.1.0 dev flannel.1 FAILED
            [2026-11-25T18:37:45.902397] Deleted 10.244.1.0 dev flannel.1 FAILED
            [2026-11-25T18:37:45.905576] Deleted 192.0.2.12 dev flannel.1 lladdr 02:00:00:00:00:01 NOARP PERMANENT
            [2026-11-25T18:37:45.907216] Deleted 10.244.1.0/24 via 10.244.1.0 dev flannel.1 onlink
            [2026-11-25T18:37:46.000001] Deleted 10.88.0.0/16 dev cni0 proto kernel scope link src 10.88.0.1
            [2026-11-25T18:37:46.100000] Deleted 7: flannel.1: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1450 qdisc noqueue state UNKNOWN group default
                link/ether 0e:4f:1d:2a:5b:6c brd ff:ff:ff:ff:ff:ff
            """;

    @Test
    void stampedLinesAreEventsInTheGivenZoneAndContinuationsAndTheMarkerAreLeftOut() {
        List<IpMonitor.Event> events = IpMonitor.parse("node1", OUTPUT, ZoneOffset.UTC);
        assertThat(events).hasSize(9);
        assertThat(events.get(0).at()).isEqualTo(Instant.parse("2026-11-25T18:37:45.768674Z"));
        assertThat(events.get(0).node()).isEqualTo("node1");
        assertThat(events.get(1).text()).isEqualTo("10.244.1.0/24 via 10.244.1.0 dev flannel.1 onlink");
    }

    @Test
    void deletionsOnTheVtepAreToldApartFromOtherDevicesAndFromUpdates() {
        List<IpMonitor.Event> onVtep = IpMonitor.parse("node1", OUTPUT, ZoneOffset.UTC).stream()
                .filter(e -> e.deletion() && e.concerns("flannel.1")).toList();
        assertThat(onVtep).extracting(IpMonitor.Event::text).containsExactly(
                "Deleted 10.244.1.0 dev flannel.1 FAILED",
                "Deleted 192.0.2.12 dev flannel.1 lladdr 02:00:00:00:00:01 NOARP PERMANENT",
                "Deleted 10.244.1.0/24 via 10.244.1.0 dev flannel.1 onlink",
                "Deleted 7: flannel.1: <BROADCAST,MULTICAST,UP,LOWER_UP> mtu 1450 qdisc noqueue state UNKNOWN group default");
        assertThat(new IpMonitor.Event("n", Instant.EPOCH, "Deleted 10.244.1.0 dev flannel.10 FAILED").concerns("flannel.1"))
                .isFalse();
    }
}
