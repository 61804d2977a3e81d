package org.jflannel.netpol;

import java.util.List;

/**
 * One ingress or egress rule: traffic from (to) any of {@code peers} on any of {@code ports}. No peers: every
 * source (destination); no ports: every port and protocol.
 */
public record PolicyRule(List<PolicyPeer> peers, List<PolicyPort> ports) {
    public PolicyRule {
        peers = List.copyOf(peers);
        ports = List.copyOf(ports);
    }

    /** Everything: {@code - {}}. */
    public static final PolicyRule ALLOW_ALL = new PolicyRule(List.of(), List.of());
}
