package org.jflannel.e2e;

import java.util.Map;
import org.junit.jupiter.api.Tag;

/** {@link UpstreamUdpPairTests} with our daemons as shipped: the udp defaults, nothing set. */
@Tag("e2e")
class UpstreamUdpPairIT extends UpstreamUdpPairTests {
    @Override
    Map<String, String> daemonEnv() {
        return Map.of();
    }
}
