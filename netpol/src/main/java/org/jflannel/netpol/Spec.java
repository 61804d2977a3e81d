package org.jflannel.netpol;

/**
 * NetworkPolicy's semantics evaluated directly from the objects, one packet at a time: the reference the
 * compiled rules are tested against, never the data path. A packet from {@code src} to {@code dst} passes
 * when the source's egress allows it and the destination's ingress does: a direction no policy isolates
 * allows everything; an isolated one allows what some rule of some policy selecting the pod allows (the
 * union). A rule allows a packet when one of its peers (or any, if none) is the other end and one of its
 * ports (or any, if none) is the packet's: protocol and port, a named port taken from the destination pod.
 * {@code protocol} null stands for a packet without ports (ICMP, say), which only a rule without ports allows.
 */
public final class Spec {
    private Spec() {
    }

    public static boolean allows(ClusterState s, Endpoint src, Endpoint dst, Protocol protocol, int port) {
        return directionAllows(s, Direction.EGRESS, src, dst, dst, protocol, port)
                && directionAllows(s, Direction.INGRESS, dst, src, dst, protocol, port);
    }

    /** {@code self}'s policies of {@code direction} allow the packet whose other end is {@code peer}. */
    private static boolean directionAllows(ClusterState s, Direction direction, Endpoint self, Endpoint peer, Endpoint dst,
                                           Protocol protocol, int port) {
        if (self.pod() == null) {
            return true;
        }
        var policies = s.isolating(self.pod(), direction);
        if (policies.isEmpty()) {
            return true;
        }
        for (Policy p : policies) {
            for (PolicyRule r : direction == Direction.INGRESS ? p.ingressRules() : p.egressRules()) {
                if (peerMatches(s, p.namespace(), r, peer) && portMatches(r, dst, protocol, port)) {
                    return true;
                }
            }
        }
        return false;
    }

    private static boolean peerMatches(ClusterState s, String policyNamespace, PolicyRule r, Endpoint e) {
        if (r.peers().isEmpty()) {
            return true;
        }
        for (PolicyPeer peer : r.peers()) {
            if (peer.ipBlock() != null ? peer.ipBlock().contains(e.addr())
                    : e.pod() != null && e.pod().subject() && peer.selects(policyNamespace, e.pod(), s.labelsOf(e.pod().namespace()))) {
                return true;
            }
        }
        return false;
    }

    private static boolean portMatches(PolicyRule r, Endpoint dst, Protocol protocol, int port) {
        if (r.ports().isEmpty()) {
            return true;
        }
        if (protocol == null) {
            return false;
        }
        for (PolicyPort pp : r.ports()) {
            if (pp.protocol() != protocol) {
                continue;
            }
            if (pp.isNamed()) {
                if (dst.pod() != null && dst.pod().port(pp.name(), protocol).filter(n -> n == port).isPresent()) {
                    return true;
                }
            } else if (port >= pp.from() && port <= pp.to()) {
                return true;
            }
        }
        return false;
    }
}
