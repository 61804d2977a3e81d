package org.jflannel.netpol;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * The compiled rules of every node, run as the kernel runs them ({@link RulesInterpreter}), decide every
 * packet as the spec does ({@link Spec}): random clusters of pods (three namespaces, three nodes, random
 * labels and named ports, some dual-stack, some on the host's network or ended) and random policies
 * (selectors with labels and expressions, namespace selectors, both, ipBlocks with exceptions, numbered,
 * ranged and named ports of each protocol, either direction), every pod and a few outside addresses to
 * every other, on a handful of ports.
 */
class CompilerPropertyTest {
    static final List<String> NAMESPACES = List.of("x", "y", "z");
    static final List<String> NODES = List.of("n1", "n2", "n3");
    static final List<String> KEYS = List.of("app", "tier");
    static final List<String> VALUES = List.of("a", "b", "c");
    static final List<PodInfo.NamedPort> NAMED = List.of(new PodInfo.NamedPort("http", Protocol.TCP, 80),
            new PodInfo.NamedPort("dns", Protocol.UDP, 53), new PodInfo.NamedPort("http", Protocol.TCP, 8080),
            new PodInfo.NamedPort("sig", Protocol.SCTP, 80));
    static final List<Object[]> PACKETS = List.of(new Object[] {Protocol.TCP, 80}, new Object[] {Protocol.TCP, 81},
            new Object[] {Protocol.UDP, 53}, new Object[] {Protocol.TCP, 8080}, new Object[] {Protocol.SCTP, 80},
            new Object[] {null, 0});
    static final List<Addr> OUTSIDE = List.of(Addr.parse("192.0.2.7"), Addr.parse("10.244.9.9"), Addr.parse("2001:db8::7"));

    @Property(tries = 400)
    void theCompiledRulesDecideEveryPacketAsTheSpecDoes(@ForAll("clusters") ClusterState s) {
        Map<String, NodeRules> byNode = new TreeMap<>();
        for (String n : NODES) {
            byNode.put(n, Compiler.compile(s, n));
        }
        List<Endpoint> ends = new ArrayList<>();
        for (PodInfo p : s.pods()) {
            p.ips().forEach(a -> ends.add(Endpoint.of(p, a)));
        }
        OUTSIDE.forEach(a -> ends.add(Endpoint.external(a)));
        for (Endpoint src : ends) {
            for (Endpoint dst : ends) {
                if (src == dst || src.addr().family() != dst.addr().family() || (src.pod() == null && dst.pod() == null)) {
                    continue;
                }
                if (src.pod() != null && dst.pod() != null && !src.pod().subject() || dst.pod() != null && !dst.pod().subject()) {
                    continue; // an ended pod's address is nobody's; a host-network pod is the node itself
                }
                for (Object[] pk : PACKETS) {
                    Protocol proto = (Protocol) pk[0];
                    int port = (Integer) pk[1];
                    boolean spec = Spec.allows(s, src, dst, proto, port);
                    assertThat(RulesInterpreter.allows(byNode, src, dst, proto, port))
                            .as("%s -> %s %s/%d in %s", src, dst, proto, port, s).isEqualTo(spec);
                }
            }
        }
    }

    @Property(tries = 100)
    void theTableDependsOnTheStateNotOnTheOrderItsObjectsCameIn(@ForAll("clusters") ClusterState s) {
        List<PodInfo> pods = new ArrayList<>(s.pods());
        java.util.Collections.reverse(pods);
        List<Policy> policies = new ArrayList<>(s.policies());
        java.util.Collections.reverse(policies);
        ClusterState reversed = new ClusterState(pods, s.namespaceLabels(), policies);
        for (String node : NODES) {
            assertThat(NftScript.replace(Compiler.compile(reversed, node))).isEqualTo(NftScript.replace(Compiler.compile(s, node)));
        }
    }

    @Provide
    Arbitrary<ClusterState> clusters() {
        Arbitrary<List<PodInfo>> pods = pod().list().ofMinSize(1).ofMaxSize(8).map(CompilerPropertyTest::numbered);
        // one object per namespace and name, as the API server keeps them
        Arbitrary<List<Policy>> policies = policy().list().ofMaxSize(4).map(l -> List.copyOf(l.stream()
                .collect(java.util.stream.Collectors.toMap(Policy::id, x -> x, (x, y) -> x, java.util.LinkedHashMap::new)).values()));
        Arbitrary<Map<String, Map<String, String>>> ns = Arbitraries.of("prod", "dev").list().ofSize(3).map(envs -> {
            Map<String, Map<String, String>> m = new TreeMap<>();
            for (int i = 0; i < 3; i++) {
                m.put(NAMESPACES.get(i), Map.of("kubernetes.io/metadata.name", NAMESPACES.get(i), "env", envs.get(i)));
            }
            return m;
        });
        return Combinators.combine(pods, ns, policies).as(ClusterState::new);
    }

    /** Gives the pods unique names and addresses (their node's subnet; IPv6 beside for some). */
    private static List<PodInfo> numbered(List<PodInfo> drafts) {
        List<PodInfo> out = new ArrayList<>();
        for (int i = 0; i < drafts.size(); i++) {
            PodInfo d = drafts.get(i);
            int node = NODES.indexOf(d.node()) + 1;
            List<Addr> ips = new ArrayList<>(List.of(Addr.parse("10.244." + node + "." + (i + 2))));
            if (!d.ips().isEmpty() && d.ips().get(0).family() == 6) {
                ips.add(Addr.parse("fd00:" + node + "::" + Integer.toHexString(i + 2)));
            }
            out.add(new PodInfo(d.namespace(), "p" + i, d.labels(), ips, d.node(), d.hostNetwork(), d.ports(), d.ended()));
        }
        return out;
    }

    private Arbitrary<PodInfo> pod() {
        Arbitrary<Map<String, String>> labels = Arbitraries.maps(Arbitraries.of(KEYS), Arbitraries.of(VALUES)).ofMaxSize(2);
        Arbitrary<List<PodInfo.NamedPort>> ports = Arbitraries.of(NAMED).set().ofMaxSize(2).map(set -> {
            List<PodInfo.NamedPort> l = new ArrayList<>();
            for (PodInfo.NamedPort p : set) { // names are unique per pod
                if (l.stream().noneMatch(q -> q.name().equals(p.name()))) {
                    l.add(p);
                }
            }
            return l;
        });
        Arbitrary<Boolean> dual = Arbitraries.of(true, false, false);
        Arbitrary<Integer> kind = Arbitraries.integers().between(0, 19); // 0: host network, 1: ended
        return Combinators.combine(Arbitraries.of(NAMESPACES), Arbitraries.of(NODES), labels, ports, dual, kind)
                .as((ns, node, l, p, d, k) -> new PodInfo(ns, "draft", l, d ? List.of(Addr.parse("::1")) : List.of(), node,
                        k == 0, p, k == 1));
    }

    private Arbitrary<LabelSelector> selector() {
        Arbitrary<Map<String, String>> labels = Arbitraries.maps(Arbitraries.of(KEYS), Arbitraries.of(VALUES)).ofMaxSize(1);
        Arbitrary<LabelSelector.Requirement> req = Combinators.combine(Arbitraries.of(KEYS), Arbitraries.of(LabelSelector.Operator.values()),
                Arbitraries.of(VALUES).set().ofMinSize(1).ofMaxSize(2)).as((k, op, vals) -> new LabelSelector.Requirement(k, op,
                op == LabelSelector.Operator.In || op == LabelSelector.Operator.NotIn ? vals : Set.of()));
        return Combinators.combine(labels, req.list().ofMaxSize(1)).as(LabelSelector::new);
    }

    private Arbitrary<LabelSelector> nsSelector() {
        return Arbitraries.of(LabelSelector.ALL, LabelSelector.of(Map.of("env", "prod")), LabelSelector.of(Map.of("env", "dev")),
                LabelSelector.of(Map.of("kubernetes.io/metadata.name", "y")));
    }

    private Arbitrary<PolicyPeer> peer() {
        Arbitrary<PolicyPeer> blocks = Arbitraries.of(
                new PolicyPeer.IpBlock(Cidr.parse("cidr", "10.244.0.0/16"), List.of(Cidr.parse("except", "10.244.2.0/24"))),
                new PolicyPeer.IpBlock(Cidr.parse("cidr", "10.244.1.0/24"), List.of()),
                new PolicyPeer.IpBlock(Cidr.parse("cidr", "0.0.0.0/0"), List.of(Cidr.parse("except", "10.244.0.0/16"))),
                new PolicyPeer.IpBlock(Cidr.parse("cidr", "fd00::/16"), List.of(Cidr.parse("except", "fd00:3::/32")))).map(PolicyPeer::block);
        return Arbitraries.oneOf(selector().map(PolicyPeer::pods), nsSelector().map(PolicyPeer::namespaces),
                Combinators.combine(nsSelector(), selector()).as(PolicyPeer::podsInNamespaces), blocks);
    }

    private Arbitrary<PolicyPort> port() {
        return Arbitraries.of(PolicyPort.number(Protocol.TCP, 80), PolicyPort.number(Protocol.UDP, 53),
                PolicyPort.range(Protocol.TCP, 80, 81), PolicyPort.range(Protocol.TCP, 1000, 9000), PolicyPort.all(Protocol.SCTP),
                PolicyPort.all(Protocol.UDP), PolicyPort.named(Protocol.TCP, "http"), PolicyPort.named(Protocol.UDP, "dns"),
                PolicyPort.named(Protocol.SCTP, "sig"), PolicyPort.named(Protocol.UDP, "http"));
    }

    private Arbitrary<PolicyRule> rule() {
        return Combinators.combine(peer().list().ofMaxSize(2), port().list().ofMaxSize(2)).as(PolicyRule::new);
    }

    private Arbitrary<Policy> policy() {
        Arbitrary<Integer> types = Arbitraries.integers().between(1, 3); // 1 ingress, 2 egress, 3 both
        return Combinators.combine(Arbitraries.of(NAMESPACES), Arbitraries.integers().between(0, 99), selector(), types,
                rule().list().ofMaxSize(2), rule().list().ofMaxSize(2)).as((ns, n, sel, t, in, out) ->
                new Policy(ns, "pol" + n, sel, (t & 1) != 0, (t & 2) != 0, in, out));
    }
}
