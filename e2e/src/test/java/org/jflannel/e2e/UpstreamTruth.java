package org.jflannel.e2e;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jflannel.netpol.Protocol;

/**
 * Upstream's expectation of one {@code ValidateOrFail}: the truth table {@code NewReachability(pods, true)} and
 * its {@code Expect}, {@code ExpectPeer}, {@code ExpectAllIngress}, {@code ExpectAllEgress} calls, over the pods
 * the upstream case creates ({@code initializeResources(..., "x/a", "x/b", "y/a")}), on one protocol and port.
 * Pairs of a pod with itself are left out, as upstream ignores loopback.
 */
final class UpstreamTruth {
    /** upstream's {@code Peer}: a namespace, a pod name, either or both empty (any). */
    record Peer(String namespace, String pod) {
        static final Peer ANY = new Peer(null, null);

        static Peer ns(String ns) {
            return new Peer(ns, null);
        }

        static Peer pod(String id) {
            return new Peer(id.substring(0, 1), id.substring(2));
        }

        boolean matches(String id) {
            return (namespace == null || id.startsWith(namespace + "/")) && (pod == null || id.substring(2).equals(pod));
        }
    }

    private final Protocol protocol;
    private final int port;
    private final List<String> pods;
    private final Map<ProbeMatrix.Probe, Boolean> table = new LinkedHashMap<>();

    private UpstreamTruth(Protocol protocol, int port, List<String> pods) {
        this.protocol = protocol;
        this.port = port;
        this.pods = List.copyOf(pods);
        for (String from : pods) {
            for (String to : pods) {
                if (!from.equals(to)) {
                    table.put(probe(from, to), true);
                }
            }
        }
    }

    /** {@code NewReachability(pods, true)} for a {@code TestCase{ToPort: port, Protocol: protocol}}. */
    static UpstreamTruth on(Protocol protocol, int port, List<String> pods) {
        return new UpstreamTruth(protocol, port, pods);
    }

    UpstreamTruth expectPeer(Peer from, Peer to, boolean connected) {
        for (String f : pods) {
            for (String t : pods) {
                if (!f.equals(t) && from.matches(f) && to.matches(t)) {
                    table.put(probe(f, t), connected);
                }
            }
        }
        return this;
    }

    UpstreamTruth expect(String from, String to, boolean connected) {
        return expectPeer(Peer.pod(from), Peer.pod(to), connected);
    }

    UpstreamTruth expectAllIngress(String to, boolean connected) {
        return expectPeer(Peer.ANY, Peer.pod(to), connected);
    }

    UpstreamTruth expectAllEgress(String from, boolean connected) {
        return expectPeer(Peer.pod(from), Peer.ANY, connected);
    }

    Map<ProbeMatrix.Probe, Boolean> table() {
        return table;
    }

    private ProbeMatrix.Probe probe(String from, String to) {
        return new ProbeMatrix.Probe(from, to, protocol, port);
    }
}
