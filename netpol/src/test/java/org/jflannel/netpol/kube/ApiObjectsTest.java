package org.jflannel.netpol.kube;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.networking.v1.NetworkPolicy;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.jflannel.netpol.Addr;
import org.jflannel.netpol.Cidr;
import org.jflannel.netpol.LabelSelector;
import org.jflannel.netpol.PodInfo;
import org.jflannel.netpol.Policy;
import org.jflannel.netpol.PolicyPeer;
import org.jflannel.netpol.PolicyPort;
import org.jflannel.netpol.PolicyRule;
import org.jflannel.netpol.Protocol;
import org.junit.jupiter.api.Test;

class ApiObjectsTest {

    /** The documentation's example policy (kubernetes.io, "Network Policies"). */
    static final String DOCS_EXAMPLE = """
            apiVersion: networking.k8s.io/v1
            kind: NetworkPolicy
            metadata: {name: test-network-policy, namespace: default}
            spec:
              podSelector: {matchLabels: {role: db}}
              policyTypes: [Ingress, Egress]
              ingress:
              - from:
                - ipBlock: {cidr: 172.17.0.0/16, except: [172.17.1.0/24]}
                - namespaceSelector: {matchLabels: {project: myproject}}
                - podSelector: {matchLabels: {role: frontend}}
                ports:
                - {protocol: TCP, port: 6379}
              egress:
              - to:
                - ipBlock: {cidr: 10.0.0.0/24}
                ports:
                - {protocol: TCP, port: 5978}
            """;

    @Test
    void theDocumentationsExampleReadsAsWritten() {
        Policy p = ApiObjects.policy(Serialization.unmarshal(DOCS_EXAMPLE, NetworkPolicy.class));
        assertThat(p).isEqualTo(new Policy("default", "test-network-policy", LabelSelector.of(Map.of("role", "db")), true, true,
                List.of(new PolicyRule(List.of(
                        PolicyPeer.block(new PolicyPeer.IpBlock(Cidr.parse("c", "172.17.0.0/16"), List.of(Cidr.parse("e", "172.17.1.0/24")))),
                        PolicyPeer.namespaces(LabelSelector.of(Map.of("project", "myproject"))),
                        PolicyPeer.pods(LabelSelector.of(Map.of("role", "frontend")))), List.of(PolicyPort.number(Protocol.TCP, 6379)))),
                List.of(new PolicyRule(List.of(PolicyPeer.block(new PolicyPeer.IpBlock(Cidr.parse("c", "10.0.0.0/24"), List.of()))),
                        List.of(PolicyPort.number(Protocol.TCP, 5978))))));
    }

    @Test
    void policyTypesDefaultAsTheApiServerDefaultsThem() {
        Policy ingressOnly = ApiObjects.policy(Serialization.unmarshal("""
                metadata: {name: deny, namespace: x}
                spec: {podSelector: {}}
                """, NetworkPolicy.class));
        assertThat(ingressOnly.ingress()).isTrue();
        assertThat(ingressOnly.egress()).isFalse();
        assertThat(ingressOnly.podSelector()).isEqualTo(LabelSelector.ALL);
        Policy both = ApiObjects.policy(Serialization.unmarshal("""
                metadata: {name: out, namespace: x}
                spec: {podSelector: {}, egress: [{}]}
                """, NetworkPolicy.class));
        assertThat(both.ingress()).isTrue();
        assertThat(both.egress()).isTrue();
        assertThat(both.egressRules()).containsExactly(PolicyRule.ALLOW_ALL);
    }

    @Test
    void portsByNameRangesAndProtocolAndSelectorsWithExpressionsAndBothSelectorsInOnePeer() {
        Policy p = ApiObjects.policy(Serialization.unmarshal("""
                metadata: {name: p, namespace: x}
                spec:
                  podSelector: {matchExpressions: [{key: app, operator: In, values: [web, api]}]}
                  ingress:
                  - from: [{namespaceSelector: {matchLabels: {team: a}}, podSelector: {matchExpressions: [{key: tier, operator: Exists}]}}]
                    ports: [{port: http}, {protocol: UDP, port: 5000, endPort: 5010}, {protocol: SCTP}]
                """, NetworkPolicy.class));
        assertThat(p.podSelector()).isEqualTo(new LabelSelector(Map.of(), List.of(
                new LabelSelector.Requirement("app", LabelSelector.Operator.In, Set.of("web", "api")))));
        PolicyRule r = p.ingressRules().get(0);
        assertThat(r.peers()).containsExactly(PolicyPeer.podsInNamespaces(LabelSelector.of(Map.of("team", "a")),
                new LabelSelector(Map.of(), List.of(new LabelSelector.Requirement("tier", LabelSelector.Operator.Exists, Set.of())))));
        assertThat(r.ports()).containsExactly(PolicyPort.named(Protocol.TCP, "http"), PolicyPort.range(Protocol.UDP, 5000, 5010),
                PolicyPort.all(Protocol.SCTP));
    }

    @Test
    void aPolicyThatCannotBeRepresentedIsRefusedNamingTheField() {
        assertThatThrownBy(() -> ApiObjects.policy(Serialization.unmarshal("""
                metadata: {name: p, namespace: x}
                spec: {podSelector: {}, ingress: [{from: [{podSelector: {}}, {ipBlock: {cidr: 10.0.0.0}}]}]}
                """, NetworkPolicy.class))).hasMessage("spec.ingress[0].from[1].ipBlock.cidr: not a CIDR: \"10.0.0.0\"");
        assertThatThrownBy(() -> ApiObjects.policy(Serialization.unmarshal("""
                metadata: {name: p, namespace: x}
                spec: {podSelector: {}, egress: [{ports: [{protocol: ICMP}]}]}
                """, NetworkPolicy.class))).hasMessage("spec.egress[0].ports[0].protocol: expected TCP, UDP or SCTP, got \"ICMP\"");
        assertThatThrownBy(() -> ApiObjects.policy(Serialization.unmarshal("""
                metadata: {name: p, namespace: x}
                spec: {podSelector: {matchExpressions: [{key: a, operator: In}]}}
                """, NetworkPolicy.class))).hasMessage("spec.podSelector.matchExpressions[0].values: must be non-empty for operator In (key a)");
        assertThatThrownBy(() -> ApiObjects.policy(Serialization.unmarshal("""
                metadata: {name: p, namespace: x}
                spec: {podSelector: {}, ingress: [{ports: [{port: 80, endPort: 70}]}]}
                """, NetworkPolicy.class))).hasMessage("spec.ingress[0].ports[0].endPort: expected 80..65535, got 70");
        assertThatThrownBy(() -> ApiObjects.policy(Serialization.unmarshal("""
                metadata: {name: p, namespace: x}
                spec: {podSelector: {}, policyTypes: [Ingress, Sideways]}
                """, NetworkPolicy.class))).hasMessage("spec.policyTypes[1]: expected Ingress or Egress, got \"Sideways\"");
    }

    @Test
    void aPodsAddressesNamedPortsNodeAndPhaseAreReadAndItsUnreadablePartsLeftOut() {
        PodInfo p = ApiObjects.pod(Serialization.unmarshal("""
                metadata: {name: web-1, namespace: x, labels: {app: web}}
                spec:
                  nodeName: node-2
                  containers:
                  - name: c
                    ports: [{name: http, containerPort: 8080}, {containerPort: 9090}, {name: q, containerPort: 53, protocol: UDP},
                            {name: weird, containerPort: 7, protocol: ICMP}]
                status:
                  phase: Running
                  podIP: 10.244.2.5
                  podIPs: [{ip: 10.244.2.5}, {ip: "fd00:2::5"}, {ip: not-an-ip}]
                """, Pod.class));
        assertThat(p).isEqualTo(new PodInfo("x", "web-1", Map.of("app", "web"), List.of(Addr.parse("10.244.2.5"), Addr.parse("fd00:2::5")),
                "node-2", false, List.of(new PodInfo.NamedPort("http", Protocol.TCP, 8080), new PodInfo.NamedPort("q", Protocol.UDP, 53)),
                false));
        PodInfo done = ApiObjects.pod(Serialization.unmarshal("""
                metadata: {name: job, namespace: x}
                spec: {nodeName: n, hostNetwork: true, containers: [{name: c}]}
                status: {phase: Succeeded, podIP: 192.0.2.1}
                """, Pod.class));
        assertThat(done.ended()).isTrue();
        assertThat(done.hostNetwork()).isTrue();
        assertThat(done.subject()).isFalse();
    }

    @Test
    void thePodStoreKeepsKeysAndVersionsAndSaysItHoldsNoPods() {
        Pod full = Serialization.unmarshal("""
                metadata: {name: web-1, namespace: x, labels: {app: web}, resourceVersion: "7", annotations: {big: "x"}}
                spec:
                  nodeName: node-2
                  containers:
                  - {name: c, image: nginx, env: [{name: A, value: b}], ports: [{name: http, containerPort: 8080}]}
                status: {phase: Running, podIP: 10.244.2.5, podIPs: [{ip: 10.244.2.5}]}
                """, Pod.class);
        KeyOnlyStore<Pod> store = new KeyOnlyStore<>(PolicyInformers::barePod);
        assertThat(store.put(store.getKey(full), full)).isNull();
        assertThat(store.isFullState()).isFalse();
        Pod kept = store.get("x/web-1");
        assertThat(kept.getMetadata().getNamespace()).isEqualTo("x");
        assertThat(kept.getMetadata().getName()).isEqualTo("web-1");
        assertThat(kept.getMetadata().getResourceVersion()).isEqualTo("7");
        assertThat(kept.getMetadata().getLabels()).isNullOrEmpty();
        assertThat(kept.getStatus()).isNull();
        assertThat(store.keySet()).containsExactly("x/web-1");
        Pod next = new io.fabric8.kubernetes.api.model.PodBuilder(full).editMetadata().withResourceVersion("8").endMetadata().build();
        assertThat(store.put("x/web-1", next).getMetadata().getResourceVersion()).as("the version before").isEqualTo("7");
        assertThat(store.values()).extracting(p -> p.getMetadata().getResourceVersion()).containsExactly("8");
        assertThat(store.remove("x/web-1").getMetadata().getName()).isEqualTo("web-1");
        assertThat(store.size()).isZero();
        assertThat(store.get("x/web-1")).isNull();
    }
}
