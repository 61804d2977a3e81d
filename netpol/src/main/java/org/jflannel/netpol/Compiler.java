package org.jflannel.netpol;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import org.jflannel.netpol.NodeRules.AddrSet;
import org.jflannel.netpol.NodeRules.Allow;
import org.jflannel.netpol.NodeRules.AnyPeer;
import org.jflannel.netpol.NodeRules.BlockPeer;
import org.jflannel.netpol.NodeRules.FromOrTo;
import org.jflannel.netpol.NodeRules.Peer;
import org.jflannel.netpol.NodeRules.PodChain;
import org.jflannel.netpol.NodeRules.PortElement;
import org.jflannel.netpol.NodeRules.PortRange;
import org.jflannel.netpol.NodeRules.PortSet;
import org.jflannel.netpol.NodeRules.SetPeer;
import org.jflannel.netpol.NodeRules.ToNamedPort;

/**
 * A cluster's state to one node's {@link NodeRules}: for each pod of the node that some policy isolates,
 * a chain per isolated direction allowing the union of the rules of every policy selecting it. Peers
 * given by selectors become address sets named after the selector (the same selector in two policies is
 * one set; a pod's label change touches only the sets it enters or leaves); ipBlocks stay in the rule;
 * named ports are resolved against the destination pod: for ingress the chain's own pod (a port number),
 * for egress every pod a peer selects (a set of address, protocol and port). Names are stable hashes of
 * what they stand for, so the same state gives the same names in every process.
 */
public final class Compiler {
    private Compiler() {
    }

    public static NodeRules compile(ClusterState s, String node) {
        Builder b = new Builder(s);
        List<PodChain> chains = new ArrayList<>();
        for (PodInfo p : s.pods()) {
            if (!p.subject() || !node.equals(p.node())) {
                continue;
            }
            for (Direction d : Direction.values()) {
                // by id: the table depends on the state, never on the order the objects came in
                List<Policy> policies = s.isolating(p, d).stream().sorted(Comparator.comparing(Policy::id)).toList();
                if (!policies.isEmpty()) {
                    chains.add(b.chain(p, d, policies));
                }
            }
        }
        chains.sort(Comparator.comparing(PodChain::name));
        return new NodeRules(node, b.sets, b.portSets, chains);
    }

    /** A short, stable name for {@code what}: {@code prefix} and 12 hex digits of its SHA-256. */
    static String name(String prefix, String what) {
        try {
            byte[] h = MessageDigest.getInstance("SHA-256").digest(what.getBytes(StandardCharsets.UTF_8));
            return prefix + HexFormat.of().formatHex(h, 0, 6);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 missing from the JDK", e);
        }
    }

    private static final class Builder {
        final ClusterState s;
        final TreeMap<String, AddrSet> sets = new TreeMap<>();
        final TreeMap<String, PortSet> portSets = new TreeMap<>();

        Builder(ClusterState s) {
            this.s = s;
        }

        PodChain chain(PodInfo p, Direction d, List<Policy> policies) {
            Set<Allow> allows = new LinkedHashSet<>();
            for (Policy pol : policies) {
                for (PolicyRule r : d == Direction.INGRESS ? pol.ingressRules() : pol.egressRules()) {
                    rule(p, d, pol.namespace(), r, allows);
                }
            }
            String name = name(d == Direction.INGRESS ? "in_" : "eg_", p.id());
            return new PodChain(name, p.id(), d, p.ips(), List.copyOf(allows));
        }

        private void rule(PodInfo p, Direction d, String policyNamespace, PolicyRule r, Set<Allow> allows) {
            List<PortRange> ranges = new ArrayList<>();
            List<PolicyPort> named = new ArrayList<>();
            for (PolicyPort pp : r.ports()) {
                if (!pp.isNamed()) {
                    ranges.add(new PortRange(pp.protocol(), pp.from(), pp.to()));
                } else if (d == Direction.INGRESS) { // the destination is this pod: its own number, if it has the name
                    p.port(pp.name(), pp.protocol()).ifPresent(n -> ranges.add(new PortRange(pp.protocol(), n, n)));
                } else {
                    named.add(pp);
                }
            }
            List<PolicyPeer> peers = r.peers().isEmpty() ? java.util.Collections.singletonList(null) : r.peers();
            for (PolicyPeer peer : peers) {
                Peer m = peer == null ? new AnyPeer() : peer(policyNamespace, peer);
                if (r.ports().isEmpty()) {
                    allows.add(new FromOrTo(m, List.of()));
                } else if (!ranges.isEmpty()) {
                    allows.add(new FromOrTo(m, ranges));
                }
                for (PolicyPort pp : named) {
                    allows.add(namedPort(policyNamespace, peer, pp));
                }
            }
        }

        private Peer peer(String policyNamespace, PolicyPeer peer) {
            if (peer.ipBlock() != null) {
                return new BlockPeer(peer.ipBlock());
            }
            String base = name("s_", key(policyNamespace, peer));
            String set4 = base + "_4";
            String set6 = base + "_6";
            if (!sets.containsKey(set4)) {
                Set<Addr> members = new TreeSet<>();
                for (PodInfo q : s.pods()) {
                    if (q.subject() && peer.selects(policyNamespace, q, s.labelsOf(q.namespace()))) {
                        members.addAll(q.ips());
                    }
                }
                sets.put(set4, new AddrSet(set4, 4, family(members, 4)));
                sets.put(set6, new AddrSet(set6, 6, family(members, 6)));
            }
            return new SetPeer(set4, set6);
        }

        /** Egress to {@code pp}'s name: every address of a pod {@code peer} matches (any, if null) that has the port. */
        private Allow namedPort(String policyNamespace, PolicyPeer peer, PolicyPort pp) {
            String base = name("p_", (peer == null ? "any" : key(policyNamespace, peer)) + "|" + pp.protocol() + "|" + pp.name());
            String set4 = base + "_4";
            String set6 = base + "_6";
            if (!portSets.containsKey(set4)) {
                Set<PortElement> members = new TreeSet<>();
                for (PodInfo q : s.pods()) {
                    var port = q.port(pp.name(), pp.protocol());
                    if (!q.subject() || port.isEmpty()) {
                        continue;
                    }
                    for (Addr a : q.ips()) {
                        if (peer == null || (peer.ipBlock() != null ? peer.ipBlock().contains(a)
                                : peer.selects(policyNamespace, q, s.labelsOf(q.namespace())))) {
                            members.add(new PortElement(a, pp.protocol(), port.get()));
                        }
                    }
                }
                portSets.put(set4, new PortSet(set4, 4, members.stream().filter(e -> e.addr().family() == 4)
                        .collect(java.util.stream.Collectors.toCollection(TreeSet::new))));
                portSets.put(set6, new PortSet(set6, 6, members.stream().filter(e -> e.addr().family() == 6)
                        .collect(java.util.stream.Collectors.toCollection(TreeSet::new))));
            }
            return new ToNamedPort(set4, set6);
        }

        /** What a selector peer stands for: the namespaces it looks in and the pods it takes there. */
        private static String key(String policyNamespace, PolicyPeer peer) {
            if (peer.ipBlock() != null) {
                return "block " + peer.ipBlock();
            }
            String ns = peer.namespaceSelector() == null ? "namespace " + policyNamespace : "namespaces " + peer.namespaceSelector();
            return ns + " pods " + (peer.podSelector() == null ? LabelSelector.ALL : peer.podSelector());
        }

        private static TreeSet<Addr> family(Set<Addr> all, int family) {
            TreeSet<Addr> out = new TreeSet<>();
            for (Addr a : all) {
                if (a.family() == family) {
                    out.add(a);
                }
            }
            return out;
        }
    }
}
