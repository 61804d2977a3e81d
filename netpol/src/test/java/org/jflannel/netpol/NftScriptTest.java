package org.jflannel.netpol;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.jflannel.netpol.NodeRules.PortRange;
import org.junit.jupiter.api.Test;

class NftScriptTest {

    @Test
    void overlappingOrTouchingPortRangesBecomeOnePerProtocolAsAnIntervalSetNeedsThem() {
        assertThat(NftScript.disjoint(List.of(new PortRange(Protocol.TCP, 80, 81), new PortRange(Protocol.UDP, 53, 53),
                new PortRange(Protocol.TCP, 80, 80), new PortRange(Protocol.TCP, 82, 90), new PortRange(Protocol.TCP, 1000, 1000),
                new PortRange(Protocol.UDP, 53, 60)))).containsExactly(new PortRange(Protocol.TCP, 80, 90),
                new PortRange(Protocol.TCP, 1000, 1000), new PortRange(Protocol.UDP, 53, 60));
    }
}
