package org.jflannel.netpol;

import java.util.Map;
import org.jflannel.netpol.NodeRules.Allow;
import org.jflannel.netpol.NodeRules.AnyPeer;
import org.jflannel.netpol.NodeRules.BlockPeer;
import org.jflannel.netpol.NodeRules.FromOrTo;
import org.jflannel.netpol.NodeRules.PodChain;
import org.jflannel.netpol.NodeRules.PortElement;
import org.jflannel.netpol.NodeRules.SetPeer;
import org.jflannel.netpol.NodeRules.ToNamedPort;

/**
 * Runs a packet through compiled rules as the kernel runs it through {@link NftScript}'s table: on each node
 * the packet is forwarded by (its source's, then its destination's, once if they are one), the chain of the
 * destination's address for ingress, then that of the source's for egress; a chain passes the packet when
 * one of its allows matches. Tests only: it is how the compiler is checked against {@link Spec}.
 */
final class RulesInterpreter {
    private RulesInterpreter() {
    }

    static boolean allows(Map<String, NodeRules> byNode, Endpoint src, Endpoint dst, Protocol protocol, int port) {
        String srcNode = src.pod() == null ? null : src.pod().node();
        String dstNode = dst.pod() == null ? null : dst.pod().node();
        boolean ok = srcNode == null || forward(byNode.get(srcNode), src.addr(), dst.addr(), protocol, port);
        if (dstNode != null && !dstNode.equals(srcNode)) {
            ok &= forward(byNode.get(dstNode), src.addr(), dst.addr(), protocol, port);
        }
        return ok;
    }

    /** One node's forward hook. */
    static boolean forward(NodeRules r, Addr src, Addr dst, Protocol protocol, int port) {
        if (r == null) {
            return true;
        }
        for (PodChain c : r.chains()) {
            if (c.direction() == Direction.INGRESS && c.addresses().contains(dst) && !passes(r, c, src, dst, protocol, port)) {
                return false;
            }
        }
        for (PodChain c : r.chains()) {
            if (c.direction() == Direction.EGRESS && c.addresses().contains(src) && !passes(r, c, dst, dst, protocol, port)) {
                return false;
            }
        }
        return true;
    }

    private static boolean passes(NodeRules r, PodChain c, Addr peer, Addr dst, Protocol protocol, int port) {
        for (Allow a : c.allows()) {
            if (a instanceof ToNamedPort np) {
                var set = r.portSets().get(dst.family() == 4 ? np.set4() : np.set6());
                if (protocol != null && set.elements().contains(new PortElement(dst, protocol, port))) {
                    return true;
                }
                continue;
            }
            FromOrTo f = (FromOrTo) a;
            boolean peerOk = f.peer() instanceof AnyPeer
                    || (f.peer() instanceof SetPeer s && r.sets().get(peer.family() == 4 ? s.set4() : s.set6()).elements().contains(peer))
                    || (f.peer() instanceof BlockPeer b && b.block().contains(peer));
            boolean portOk = f.ports().isEmpty() || (protocol != null
                    && f.ports().stream().anyMatch(p -> p.protocol() == protocol && port >= p.from() && port <= p.to()));
            if (peerOk && portOk) {
                return true;
            }
        }
        return false;
    }
}
