package org.jflannel.cni;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class CheckRoutesTest {
    @Test
    void routesWithoutGatewayGetTheirFamilysGatewayAsTheDelegateInstalledThem() {
        Map<String, Object> prev = Map.of(
                "ips", List.of(Map.of("address", "10.244.1.3/24", "gateway", "10.244.1.1"),
                        Map.of("address", "fd00::3/64", "gateway", "fd00::1")),
                "routes", List.of(Map.of("dst", "10.244.0.0/16"), Map.of("dst", "0.0.0.0/0", "gw", "10.244.1.254"),
                        Map.of("dst", "fd00::/48")));

        Map<String, Object> out = CheckRoutes.withGateways(prev);

        assertThat(out.get("routes")).isEqualTo(List.of(Map.of("dst", "10.244.0.0/16", "gw", "10.244.1.1"),
                Map.of("dst", "0.0.0.0/0", "gw", "10.244.1.254"), Map.of("dst", "fd00::/48", "gw", "fd00::1")));
        assertThat(out.get("ips")).isEqualTo(prev.get("ips"));
        assertThat(prev.get("routes")).as("the argument unchanged").isEqualTo(List.of(Map.of("dst", "10.244.0.0/16"),
                Map.of("dst", "0.0.0.0/0", "gw", "10.244.1.254"), Map.of("dst", "fd00::/48")));
    }

    @Test
    void withoutAGatewayOrRoutesNothingChanges() {
        Map<String, Object> noGateway = Map.of("ips", List.of(Map.of("address", "10.244.1.3/24")),
                "routes", List.of(Map.of("dst", "10.244.0.0/16")));
        Map<String, Object> noRoutes = Map.of("ips", List.of(Map.of("address", "10.244.1.3/24", "gateway", "10.244.1.1")));

        assertThat(CheckRoutes.withGateways(noGateway).get("routes")).isEqualTo(List.of(Map.of("dst", "10.244.0.0/16")));
        assertThat(CheckRoutes.withGateways(noRoutes)).isSameAs(noRoutes);
    }
}
