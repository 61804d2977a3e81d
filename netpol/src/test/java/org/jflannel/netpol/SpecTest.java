package org.jflannel.netpol;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.jflannel.netpol.Fixtures.at;
import static org.jflannel.netpol.Fixtures.egress;
import static org.jflannel.netpol.Fixtures.from;
import static org.jflannel.netpol.Fixtures.ingress;
import static org.jflannel.netpol.Fixtures.pod;
import static org.jflannel.netpol.Fixtures.sel;
import static org.jflannel.netpol.Fixtures.state;

import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The semantics of networking.k8s.io/v1, case by case (the documentation's examples and the e2e suite's). */
class SpecTest {
    static final PodInfo A = pod("x", "a", "n1", "10.244.1.2", Map.of("pod", "a"), new PodInfo.NamedPort("serve-80-tcp", Protocol.TCP, 80));
    static final PodInfo B = pod("x", "b", "n2", "10.244.2.2", Map.of("pod", "b"));
    static final PodInfo C = pod("y", "c", "n1", "10.244.1.3", Map.of("pod", "c"));
    static final List<PodInfo> PODS = List.of(A, B, C);

    @Test
    void withoutPoliciesEverythingPasses() {
        ClusterState s = state(PODS, List.of());
        assertThat(Spec.allows(s, at(B), at(A), Protocol.TCP, 80)).isTrue();
        assertThat(Spec.allows(s, at(A), at(C), null, 0)).isTrue();
    }

    @Test
    void aPolicyWithoutRulesIsolatesItsPodsForIngressOnly() {
        ClusterState s = state(PODS, List.of(ingress("x", "deny", sel("pod", "a"))));
        assertThat(Spec.allows(s, at(B), at(A), Protocol.TCP, 80)).isFalse();
        assertThat(Spec.allows(s, at(A), at(B), Protocol.TCP, 80)).as("egress not isolated").isTrue();
        assertThat(Spec.allows(s, at(C), at(B), Protocol.UDP, 53)).as("b not selected").isTrue();
    }

    @Test
    void policiesAddUpAndARuleNeedsAPeerAndAPort() {
        PolicyRule fromB80 = from(List.of(PolicyPeer.pods(sel("pod", "b"))), PolicyPort.number(Protocol.TCP, 80));
        PolicyRule fromYUdp = from(List.of(PolicyPeer.namespaces(sel("team", "y"))), PolicyPort.all(Protocol.UDP));
        ClusterState s = state(PODS, List.of(ingress("x", "p1", sel("pod", "a"), fromB80), ingress("x", "p2", sel("pod", "a"), fromYUdp)));
        assertThat(Spec.allows(s, at(B), at(A), Protocol.TCP, 80)).isTrue();
        assertThat(Spec.allows(s, at(B), at(A), Protocol.TCP, 81)).isFalse();
        assertThat(Spec.allows(s, at(C), at(A), Protocol.UDP, 9999)).isTrue();
        assertThat(Spec.allows(s, at(C), at(A), Protocol.TCP, 80)).as("c is not b, and TCP is not UDP").isFalse();
        assertThat(Spec.allows(s, at(B), at(A), null, 0)).as("ICMP: only a rule without ports").isFalse();
    }

    @Test
    void aPodSelectorAloneLooksOnlyInThePolicysNamespaceAndBothSelectorsMeanAnd() {
        PodInfo cLikeB = pod("y", "b2", "n2", "10.244.2.9", Map.of("pod", "b"));
        List<PodInfo> pods = List.of(A, B, C, cLikeB);
        ClusterState only = state(pods, List.of(ingress("x", "p", sel("pod", "a"), from(List.of(PolicyPeer.pods(sel("pod", "b")))))));
        assertThat(Spec.allows(only, at(B), at(A), Protocol.TCP, 1)).isTrue();
        assertThat(Spec.allows(only, at(cLikeB), at(A), Protocol.TCP, 1)).as("pod=b in y").isFalse();
        ClusterState and = state(pods, List.of(ingress("x", "p", sel("pod", "a"),
                from(List.of(PolicyPeer.podsInNamespaces(sel("team", "y"), sel("pod", "b")))))));
        assertThat(Spec.allows(and, at(cLikeB), at(A), Protocol.TCP, 1)).isTrue();
        assertThat(Spec.allows(and, at(C), at(A), Protocol.TCP, 1)).as("y but not pod=b").isFalse();
        assertThat(Spec.allows(and, at(B), at(A), Protocol.TCP, 1)).as("pod=b but not y").isFalse();
    }

    @Test
    void ipBlocksTakeTheirCidrLessTheExceptions() {
        PolicyPeer block = PolicyPeer.block(new PolicyPeer.IpBlock(Cidr.parse("cidr", "10.244.0.0/16"),
                List.of(Cidr.parse("except", "10.244.2.0/24"))));
        ClusterState s = state(PODS, List.of(egress("x", "out", sel("pod", "a"), from(List.of(block)))));
        assertThat(Spec.allows(s, at(A), at(C), Protocol.TCP, 1)).isTrue();
        assertThat(Spec.allows(s, at(A), at(B), Protocol.TCP, 1)).as("in the exception").isFalse();
        assertThat(Spec.allows(s, at(A), Endpoint.external(Addr.parse("8.8.8.8")), Protocol.UDP, 53)).isFalse();
    }

    @Test
    void namedPortsAreTheDestinationPodsAndRangesEndAtEndPort() {
        PolicyRule named = from(List.of(), PolicyPort.named(Protocol.TCP, "serve-80-tcp"));
        ClusterState in = state(PODS, List.of(ingress("x", "p", sel("pod", "a"), named)));
        assertThat(Spec.allows(in, at(B), at(A), Protocol.TCP, 80)).isTrue();
        assertThat(Spec.allows(in, at(B), at(A), Protocol.TCP, 81)).isFalse();
        ClusterState out = state(PODS, List.of(egress("x", "p", sel("pod", "b"), named)));
        assertThat(Spec.allows(out, at(B), at(A), Protocol.TCP, 80)).as("a names 80").isTrue();
        assertThat(Spec.allows(out, at(B), at(C), Protocol.TCP, 80)).as("c has no such name").isFalse();
        ClusterState range = state(PODS, List.of(ingress("x", "p", sel("pod", "a"), from(List.of(), PolicyPort.range(Protocol.UDP, 80, 82)))));
        assertThat(Spec.allows(range, at(B), at(A), Protocol.UDP, 82)).isTrue();
        assertThat(Spec.allows(range, at(B), at(A), Protocol.UDP, 83)).isFalse();
    }

    @Test
    void bothDirectionsMustAllowAndHostNetworkOrEndedPodsAreNeitherSubjectNorPeers() {
        ClusterState s = state(PODS, List.of(egress("x", "out", sel("pod", "b"), from(List.of(PolicyPeer.pods(sel("pod", "a"))))),
                ingress("x", "in", sel("pod", "a"), from(List.of(PolicyPeer.namespaces(sel("team", "y")))))));
        assertThat(Spec.allows(s, at(B), at(A), Protocol.TCP, 1)).as("b may send, a may not take").isFalse();
        assertThat(Spec.allows(s, at(C), at(A), Protocol.TCP, 1)).isTrue();
        PodInfo hostNet = new PodInfo("x", "h", Map.of("pod", "a"), List.of(Addr.parse("192.0.2.1")), "n1", true, List.of(), false);
        ClusterState h = state(List.of(A, B, hostNet), List.of(ingress("x", "deny", sel("pod", "a"))));
        assertThat(Spec.allows(h, at(B), at(hostNet), Protocol.TCP, 1)).as("host-network pod not isolated").isTrue();
        ClusterState fromHost = state(List.of(A, B, hostNet), List.of(ingress("x", "p", sel("pod", "b"),
                from(List.of(PolicyPeer.pods(sel("pod", "a")))))));
        assertThat(Spec.allows(fromHost, at(hostNet), at(B), Protocol.TCP, 1)).as("not a selector peer").isFalse();
        assertThat(Spec.allows(fromHost, at(A), at(B), Protocol.TCP, 1)).isTrue();
    }

    @Test
    void invalidObjectsAreRefusedNamingTheField() {
        assertThatThrownBy(() -> LabelSelector.Requirement.of("matchExpressions[0]", "k", "In", Set.of()))
                .hasMessage("matchExpressions[0].values: must be non-empty for operator In (key k)");
        assertThatThrownBy(() -> LabelSelector.Requirement.of("matchExpressions[1]", "k", "Near", Set.of()))
                .hasMessage("matchExpressions[1].operator: expected In, NotIn, Exists or DoesNotExist, got \"Near\"");
        assertThatThrownBy(() -> new PolicyPort(Protocol.TCP, null, "http", 90)).hasMessage("endPort: needs a numeric port, got \"http\"");
        assertThatThrownBy(() -> PolicyPort.range(Protocol.TCP, 90, 80)).hasMessage("endPort: expected 90..65535, got 80");
        assertThatThrownBy(() -> Protocol.parse("ports[0].protocol", "ICMP")).hasMessage("ports[0].protocol: expected TCP, UDP or SCTP, got \"ICMP\"");
        assertThatThrownBy(() -> new PolicyPeer.IpBlock(Cidr.parse("cidr", "10.0.0.0/16"), List.of(Cidr.parse("except", "10.1.0.0/24"))))
                .hasMessage("except: 10.1.0.0/24 is not inside cidr 10.0.0.0/16");
        assertThatThrownBy(() -> Cidr.parse("ipBlock.cidr", "10.0.0.0")).hasMessage("ipBlock.cidr: not a CIDR: \"10.0.0.0\"");
    }

    @Test
    void matchExpressionsFollowTheirOperators() {
        LabelSelector s = new LabelSelector(Map.of(), List.of(
                LabelSelector.Requirement.of("e", "env", "In", Set.of("prod", "stage")),
                LabelSelector.Requirement.of("e", "tier", "NotIn", Set.of("db")),
                LabelSelector.Requirement.of("e", "app", "Exists", Set.of()),
                LabelSelector.Requirement.of("e", "legacy", "DoesNotExist", Set.of())));
        assertThat(s.matches(Map.of("env", "prod", "app", "x"))).isTrue();
        assertThat(s.matches(Map.of("env", "prod", "app", "x", "tier", "web"))).isTrue();
        assertThat(s.matches(Map.of("env", "prod", "app", "x", "tier", "db"))).isFalse();
        assertThat(s.matches(Map.of("env", "dev", "app", "x"))).isFalse();
        assertThat(s.matches(Map.of("env", "prod"))).isFalse();
        assertThat(s.matches(Map.of("env", "prod", "app", "x", "legacy", ""))).isFalse();
        assertThat(LabelSelector.ALL.matches(Map.of())).isTrue();
    }
}
