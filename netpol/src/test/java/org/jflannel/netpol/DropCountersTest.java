package org.jflannel.netpol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;

class DropCountersTest {

    @Test
    void theNamedCountersOfOurTableAreReadAndOthersLeftAlone() throws Exception {
        String json = """
                {"nftables": [{"metainfo": {"version": "1.0.6", "json_schema_version": 1}},
                 {"counter": {"family": "inet", "name": "dropped_ingress", "table": "jflannel-netpol", "handle": 3, "packets": 42, "bytes": 2520}},
                 {"counter": {"family": "inet", "name": "dropped_egress", "table": "jflannel-netpol", "handle": 4, "packets": 7, "bytes": 420}},
                 {"counter": {"family": "ip", "name": "dropped_ingress", "table": "other", "handle": 5, "packets": 999, "bytes": 1}}]}
                """;
        assertThat(DropCounters.parse(json)).isEqualTo(Map.of(Direction.INGRESS, 42L, Direction.EGRESS, 7L));
    }

    @Test
    void aMissingCounterIsZeroAndAListingWithoutItsArrayIsRefused() throws Exception {
        assertThat(DropCounters.parse("{\"nftables\": [{\"metainfo\": {}}]}")).isEqualTo(Map.of(Direction.INGRESS, 0L, Direction.EGRESS, 0L));
        assertThatThrownBy(() -> DropCounters.parse("{}")).hasMessageContaining("no \"nftables\" array");
    }
}
