package org.jflannel.e2e;

import static org.jflannel.e2e.UpstreamTruth.Peer.ANY;
import static org.jflannel.e2e.UpstreamTruth.Peer.ns;
import static org.jflannel.e2e.UpstreamTruth.Peer.pod;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The cases of Kubernetes' {@code test/e2e/network/netpol/network_policy.go} (kubernetes/kubernetes at
 * 008b3652959ca58af8be3fb5b6ecfe9ae7638282): all 42 of "NetworkPolicy between server and client" and the 3 of
 * its UDP context (not the SCTP context's 3, which need SCTP probes; the two TCP cases that prove an SCTP port is
 * not taken for TCP are in). Each under upstream's name, with its policies as upstream builds them
 * ({@code GenNetworkPolicyWithNameAndPodMatchLabel}, {@code SetSpecIngressRules}: a policy type per rule list
 * given) and its expectations as its {@code reachability.Expect*} calls state them, over the pods it creates.
 * Two more cases past upstream's file (marked {@code [jflannel]}): an endPort range and a default-deny egress
 * with a DNS-style UDP port open.
 */
final class UpstreamNetpolCases {
    interface Body {
        void run(NetpolCaseRun r) throws Exception;
    }

    /** A case: upstream's name, the pods it creates, what it does. */
    record Case(String name, List<String> pods, Body body) {
        @Override
        public String toString() {
            return name;
        }
    }

    private static final String NS = "kubernetes.io/metadata.name";
    private static final Map<String, Case> ALL = new LinkedHashMap<>();

    private UpstreamNetpolCases() {
    }

    static List<Case> all() {
        return List.copyOf(ALL.values());
    }

    static List<Case> named(Set<String> names) {
        List<Case> out = new ArrayList<>();
        for (String n : names) {
            Case c = ALL.get(n);
            if (c == null) {
                throw new IllegalArgumentException("no upstream case named \"" + n + "\"");
            }
            out.add(c);
        }
        return out;
    }

    private static void add(String name, String pods, Body body) {
        List<String> p = new ArrayList<>();
        Collections.addAll(p, pods.split(" "));
        if (ALL.put(name, new Case(name, p, body)) != null) {
            throw new IllegalStateException("two cases named " + name);
        }
    }

    static final String DEFAULT_DENY_INGRESS = "should support a 'default-deny-ingress' policy";
    static final String DEFAULT_DENY_ALL = "should support a 'default-deny-all' policy";
    static final String NAMESPACE_SELECTOR = "should enforce policy to allow traffic only from a different namespace, based on NamespaceSelector";
    static final String POD_AND_NAMESPACE_SELECTOR = "should enforce policy based on PodSelector and NamespaceSelector";
    static final String PORTS = "should enforce policy based on Ports";
    static final String NAMED_PORT_EGRESS = "should allow egress access on one named port";
    static final String CIDR_EGRESS = "should allow egress access to server in CIDR block";
    static final String CIDR_EXCEPT = "should enforce except clause while egress access to server in CIDR block";
    static final String CIDR_OVERLAP = "should ensure an IP overlapping both IPBlock.CIDR and IPBlock.Except is allowed";
    static final String CLIENT_SIDE_EGRESS = "should support denying of egress traffic on the client side (even if the server explicitly allows this traffic)";
    static final String UDP_DEFAULT_DENY_INGRESS = "UDP: should support a 'default-deny-ingress' policy";
    static final String UDP_PORTS = "UDP: should enforce policy based on Ports";
    static final String UPDATED_POD = "should allow ingress access from updated pod";
    static final String UPDATED_NAMESPACE = "should allow ingress access from updated namespace";

    static {
        add(DEFAULT_DENY_INGRESS, "x/a x/b y/a y/b", r -> {
            r.policy("x", "deny-ingress", "{podSelector: {}, policyTypes: [Ingress]}");
            r.validate(r.tcp(80).expectPeer(ANY, ns("x"), false));
        });
        add(DEFAULT_DENY_ALL, "x/a x/b y/a", r -> {
            r.policy("x", "deny-all", "{podSelector: {}, policyTypes: [Ingress, Egress]}");
            r.validate(r.tcp(80).expectPeer(ANY, ns("x"), false).expectPeer(ns("x"), ANY, false));
        });
        add("should enforce policy to allow traffic from pods within server namespace based on PodSelector", "x/a x/b x/c y/a", r -> {
            r.policy("x", "x-a-allows-x-b", "{podSelector: {matchLabels: {pod: a}}, policyTypes: [Ingress],"
                    + " ingress: [{from: [{podSelector: {matchLabels: {pod: b}}}]}]}");
            r.validate(r.tcp(80).expectAllIngress("x/a", false).expect("x/b", "x/a", true));
        });
        add("should enforce policy to allow ingress traffic for a target", "x/a x/b y/a", r -> {
            r.policy("x", "deny-all", "{podSelector: {}, policyTypes: [Ingress]}");
            r.policy("x", "allow-all-to-a", "{podSelector: {matchLabels: {pod: a}}, policyTypes: [Ingress],"
                    + " ingress: [{from: [{podSelector: {}, namespaceSelector: {}}]}]}");
            r.validate(r.tcp(80).expectAllIngress("x/a", true).expectAllIngress("x/b", false));
        });
        add("should enforce policy to allow ingress traffic from pods in all namespaces", "x/a x/b y/a z/a", r -> {
            r.policy("x", "allow-from-another-ns", "{podSelector: {matchLabels: {pod: a}}, policyTypes: [Ingress],"
                    + " ingress: [{from: [{namespaceSelector: {matchLabels: {}}}]}]}");
            r.validate(r.tcp(80));
        });
        add(NAMESPACE_SELECTOR, "x/a x/b y/a z/a", r -> {
            r.policy("x", "allow-client-a-via-ns-selector", "{podSelector: {matchLabels: {pod: a}}, policyTypes: [Ingress],"
                    + " ingress: [{from: [{namespaceSelector: {matchLabels: {" + NS + ": y}}}]}]}");
            r.validate(r.tcp(80).expectPeer(ns("x"), pod("x/a"), false).expectPeer(ns("z"), pod("x/a"), false));
        });
        add("should enforce policy based on PodSelector with MatchExpressions", "x/a x/b y/a", r -> {
            r.policy("x", "x-a-allows-x-b", "{podSelector: {matchLabels: {pod: a}}, policyTypes: [Ingress],"
                    + " ingress: [{from: [{podSelector: {matchExpressions: [{key: pod, operator: In, values: [b]}]}}]}]}");
            r.validate(r.tcp(80).expectAllIngress("x/a", false).expect("x/b", "x/a", true));
        });
        add("should enforce policy based on NamespaceSelector with MatchExpressions", "x/a x/b y/a z/a", r -> {
            r.policy("x", "allow-ns-y-match-selector", "{podSelector: {matchLabels: {pod: a}}, policyTypes: [Ingress],"
                    + " ingress: [{from: [{namespaceSelector: {matchExpressions: [{key: " + NS + ", operator: In, values: [y]}]}}]}]}");
            r.validate(r.tcp(80).expectPeer(ns("x"), pod("x/a"), false).expectPeer(ns("z"), pod("x/a"), false));
        });
        add("should enforce policy based on PodSelector or NamespaceSelector", "x/a x/b x/c y/a", r -> {
            r.policy("x", "allow-ns-y-match-selector", "{podSelector: {matchLabels: {pod: a}}, policyTypes: [Ingress],"
                    + " ingress: [{from: [{namespaceSelector: {matchExpressions: [{key: " + NS + ", operator: NotIn, values: [x]}]}},"
                    + " {podSelector: {matchLabels: {pod: b}}}]}]}");
            r.validate(r.tcp(80).expect("x/a", "x/a", false).expect("x/c", "x/a", false));
        });
        add(POD_AND_NAMESPACE_SELECTOR, "x/a x/b y/a y/b z/b", r -> {
            r.policy("x", "allow-ns-y-podselector-and-nsselector", "{podSelector: {matchLabels: {pod: a}}, policyTypes: [Ingress],"
                    + " ingress: [{from: [{namespaceSelector: {matchExpressions: [{key: " + NS + ", operator: NotIn, values: [x]}]},"
                    + " podSelector: {matchLabels: {pod: b}}}]}]}");
            r.validate(r.tcp(80).expectAllIngress("x/a", false).expect("y/b", "x/a", true).expect("z/b", "x/a", true));
        });
        add("should enforce policy based on Multiple PodSelectors and NamespaceSelectors", "x/a x/b y/a y/b y/c", r -> {
            r.policy("x", "allow-ns-y-z-pod-b-c", "{podSelector: {matchLabels: {pod: a}}, policyTypes: [Ingress],"
                    + " ingress: [{from: [{namespaceSelector: {matchExpressions: [{key: " + NS + ", operator: NotIn, values: [x]}]},"
                    + " podSelector: {matchExpressions: [{key: pod, operator: In, values: [b, c]}]}}]}]}");
            r.validate(r.tcp(80).expectPeer(ns("x"), pod("x/a"), false).expect("y/a", "x/a", false));
        });
        add("should enforce policy based on any PodSelectors", "x/a x/b x/c", r -> {
            r.policy("x", "allow-ns-x-pod-b-c", "{podSelector: {matchLabels: {pod: a}}, policyTypes: [Ingress],"
                    + " ingress: [{from: [{podSelector: {matchLabels: {pod: b}}}, {podSelector: {matchLabels: {pod: c}}}]}]}");
            r.validate(r.tcp(80).expectAllIngress("x/a", false).expect("x/b", "x/a", true).expect("x/c", "x/a", true));
        });
        add("should enforce policy to allow traffic only from a pod in a different namespace based on PodSelector and NamespaceSelector",
                "x/a x/b y/a y/b z/a", r -> {
                    r.policy("x", "allow-ns-y-pod-a-via-namespace-pod-selector", "{podSelector: {matchLabels: {pod: a}}, policyTypes: [Ingress],"
                            + " ingress: [{from: [{namespaceSelector: {matchLabels: {" + NS + ": y}}, podSelector: {matchLabels: {pod: a}}}]}]}");
                    r.validate(r.tcp(80).expectAllIngress("x/a", false).expect("y/a", "x/a", true));
                });
        add(PORTS, "x/a x/b y/a y/b z/a", r -> {
            r.policy("x", "allow-client-a-via-ns-selector", "{podSelector: {matchLabels: {pod: a}}, policyTypes: [Ingress],"
                    + " ingress: [{from: [{namespaceSelector: {matchLabels: {" + NS + ": y}}}], ports: [{port: 81, protocol: TCP}]}]}");
            r.validate(r.tcp(81).expectPeer(ns("x"), pod("x/a"), false).expectPeer(ns("y"), pod("x/a"), true)
                    .expectPeer(ns("z"), pod("x/a"), false));
        });
        add("should enforce multiple, stacked policies with overlapping podSelectors", "x/a x/b y/a y/b z/a", r -> {
            r.policy("x", "allow-client-a-via-ns-selector", "{podSelector: {matchLabels: {pod: a}}, policyTypes: [Ingress],"
                    + " ingress: [{from: [{namespaceSelector: {matchLabels: {" + NS + ": y}}}], ports: [{port: 81, protocol: TCP}]}]}");
            r.validate(r.tcp(81).expectPeer(ns("x"), pod("x/a"), false).expectPeer(ns("y"), pod("x/a"), true)
                    .expectPeer(ns("z"), pod("x/a"), false), r.tcp(80).expectAllIngress("x/a", false));
            r.policy("x", "allow-client-a-via-ns-selector-80", "{podSelector: {matchLabels: {pod: a}}, policyTypes: [Ingress],"
                    + " ingress: [{from: [{namespaceSelector: {matchLabels: {" + NS + ": y}}}], ports: [{port: 80, protocol: TCP}]}]}");
            r.validate(r.tcp(80).expectPeer(ns("x"), pod("x/a"), false).expectPeer(ns("y"), pod("x/a"), true)
                    .expectPeer(ns("z"), pod("x/a"), false));
        });
        add("should support allow-all policy", "x/a x/b y/a", r -> {
            r.policy("x", "allow-all", "{podSelector: {matchLabels: {}}, policyTypes: [Ingress], ingress: [{}]}");
            r.validate(r.tcp(80), r.tcp(81));
        });
        add("should allow ingress access on one named port", "x/a x/b y/a", r -> {
            r.policy("x", "allow-all", "{podSelector: {matchLabels: {}}, policyTypes: [Ingress], ingress: [{ports: [{port: serve-81-tcp}]}]}");
            r.validate(r.tcp(81), r.tcp(80).expectPeer(ANY, ns("x"), false));
        });
        add("should allow ingress access from namespace on one named port", "x/a x/b y/a z/a", r -> {
            r.policy("x", "allow-client-a-via-ns-selector-80", "{podSelector: {matchLabels: {pod: a}}, policyTypes: [Ingress],"
                    + " ingress: [{from: [{namespaceSelector: {matchLabels: {" + NS + ": y}}}], ports: [{port: serve-80-tcp, protocol: TCP}]}]}");
            r.validate(r.tcp(80).expectPeer(ns("x"), pod("x/a"), false).expectPeer(ns("z"), pod("x/a"), false),
                    r.tcp(81).expectAllIngress("x/a", false));
        });
        add(NAMED_PORT_EGRESS, "x/a y/a", r -> {
            r.policy("x", "allow-egress", "{podSelector: {matchLabels: {}}, policyTypes: [Egress], egress: [{ports: [{port: serve-80-tcp}]}]}");
            r.validate(r.tcp(80), r.tcp(81).expectPeer(ns("x"), ANY, false));
        });
        add("should enforce updated policy", "x/a y/a", r -> {
            r.policy("x", "allow-all-mutate-to-deny-all", "{podSelector: {matchLabels: {}}, policyTypes: [Ingress], ingress: [{}]}");
            r.validate(r.tcp(81));
            r.policy("x", "allow-all-mutate-to-deny-all", "{podSelector: {matchLabels: {}}, policyTypes: [Ingress], ingress: []}");
            r.validate(r.tcp(81).expectPeer(ANY, ns("x"), false));
        });
        add(UPDATED_NAMESPACE, "x/a y/a", r -> {
            r.policy("x", "allow-client-a-via-ns-selector", "{podSelector: {matchLabels: {pod: a}}, policyTypes: [Ingress],"
                    + " ingress: [{from: [{namespaceSelector: {matchLabels: {ns2: updated}}}]}]}");
            r.validate(r.tcp(80).expectAllIngress("x/a", false));
            r.labelNamespace("y", Map.of("ns2", "updated"));
            r.validate(r.tcp(80).expectAllIngress("x/a", false).expectPeer(ns("y"), ANY, true));
        });
        add(UPDATED_POD, "x/a x/b", r -> {
            r.policy("x", "allow-client-a-via-pod-selector", "{podSelector: {matchLabels: {pod: a}}, policyTypes: [Ingress],"
                    + " ingress: [{from: [{podSelector: {matchLabels: {pod: b, pod2: updated}}}]}]}");
            r.validate(r.tcp(80).expectAllIngress("x/a", false));
            r.relabelPod("x/b", Map.of("pod2", "updated"));
            r.validate(r.tcp(80).expectAllIngress("x/a", false).expect("x/b", "x/a", true));
        });
        add("should deny ingress from pods on other namespaces", "x/a x/b y/a z/a", r -> {
            r.policy("x", "deny-empty-policy", "{podSelector: {}, policyTypes: [Ingress], ingress: [{from: [{podSelector: {matchLabels: {}}}]}]}");
            r.validate(r.tcp(80).expectPeer(ns("y"), ns("x"), false).expectPeer(ns("z"), ns("x"), false));
        });
        add("should deny ingress access to updated pod", "x/a y/a", r -> {
            r.policy("x", "deny-ingress-via-label-selector", "{podSelector: {matchLabels: {target: isolated}}, policyTypes: [Ingress]}");
            r.validate(r.tcp(80));
            r.relabelPod("x/a", Map.of("target", "isolated"));
            r.validate(r.tcp(80).expectAllIngress("x/a", false));
        });
        add("should deny egress from pods based on PodSelector", "x/a x/b y/a", r -> {
            r.policy("x", "deny-egress-pod-a", "{podSelector: {matchLabels: {pod: a}}, policyTypes: [Egress]}");
            r.validate(r.tcp(80).expectAllEgress("x/a", false));
        });
        add("should deny egress from all pods in a namespace", "x/a x/b y/a", r -> {
            r.policy("x", "deny-egress-ns-x", "{podSelector: {}, policyTypes: [Egress]}");
            r.validate(r.tcp(80).expectPeer(ns("x"), ANY, false));
        });
        add("should work with Ingress, Egress specified together", "x/a x/b x/c y/a", r -> {
            r.policy("x", "allow-client-a-via-pod-selector", "{podSelector: {matchLabels: {pod: a}}, policyTypes: [Egress, Ingress],"
                    + " ingress: [{from: [{podSelector: {matchLabels: {pod: b}}}]}], egress: [{ports: [{port: 80}]}]}");
            r.validate(r.tcp(80).expectAllIngress("x/a", false).expect("x/b", "x/a", true),
                    r.tcp(81).expectAllIngress("x/a", false).expectAllEgress("x/a", false).expect("x/b", "x/a", true));
        });
        add(CLIENT_SIDE_EGRESS, "x/a y/a y/b", r -> {
            r.policy("x", "allow-to-ns-y-pod-a", "{podSelector: {matchLabels: {pod: a}}, policyTypes: [Egress],"
                    + " egress: [{to: [{namespaceSelector: {matchLabels: {" + NS + ": y}}, podSelector: {matchLabels: {pod: a}}}]}]}");
            String fromXa = "{policyTypes: [Ingress], ingress: [{from: [{namespaceSelector: {matchLabels: {" + NS + ": x}},"
                    + " podSelector: {matchLabels: {pod: a}}}]}], podSelector: {matchLabels: {pod: ";
            r.policy("y", "allow-from-xa-on-ya-match-selector", fromXa + "a}}}");
            r.policy("y", "allow-from-xa-on-yb-match-selector", fromXa + "b}}}");
            r.validate(r.tcp(80).expectPeer(pod("x/a"), ANY, false).expectPeer(ANY, pod("y/a"), false)
                    .expectPeer(pod("x/a"), pod("y/a"), true).expectPeer(ANY, pod("y/b"), false));
        });
        add("should enforce egress policy allowing traffic to a server in a different namespace based on PodSelector and NamespaceSelector",
                "x/a y/a y/b", r -> {
                    r.policy("x", "allow-to-ns-y-pod-a", "{podSelector: {matchLabels: {pod: a}}, policyTypes: [Egress],"
                            + " egress: [{to: [{namespaceSelector: {matchLabels: {" + NS + ": y}}, podSelector: {matchLabels: {pod: a}}}]}]}");
                    r.validate(r.tcp(80).expectAllEgress("x/a", false).expect("x/a", "y/a", true));
                });
        add("should enforce ingress policy allowing any port traffic to a server on a specific protocol", "x/a y/a", r -> {
            r.policy("x", "allow-ingress-by-proto", "{podSelector: {matchLabels: {pod: a}}, policyTypes: [Ingress], ingress: [{ports: [{protocol: TCP}]}]}");
            r.validate(r.tcp(80), r.udp(80).expectPeer(ANY, pod("x/a"), false));
        });
        add("should enforce multiple ingress policies with ingress allow-all policy taking precedence", "x/a y/a", r -> {
            r.policy("x", "allow-ingress-port-80", "{podSelector: {matchLabels: {}}, policyTypes: [Ingress], ingress: [{ports: [{port: 80}]}]}");
            r.validate(r.tcp(81).expectPeer(ANY, ns("x"), false));
            r.policy("x", "allow-ingress", "{podSelector: {matchLabels: {}}, policyTypes: [Ingress], ingress: [{}]}");
            r.validate(r.tcp(81));
        });
        add("should enforce multiple egress policies with egress allow-all policy taking precedence", "x/a y/a", r -> {
            r.policy("x", "allow-egress-port-80", "{podSelector: {matchLabels: {}}, policyTypes: [Egress], egress: [{ports: [{port: 80}]}]}");
            r.validate(r.tcp(81).expectPeer(ns("x"), ANY, false));
            r.policy("x", "allow-egress", "{podSelector: {matchLabels: {}}, policyTypes: [Egress], egress: [{}]}");
            r.validate(r.tcp(81));
        });
        add("should stop enforcing policies after they are deleted", "x/a y/a", r -> {
            r.policy("x", "deny-all", "{podSelector: {}, policyTypes: [Ingress, Egress]}");
            r.validate(r.tcp(80).expectPeer(ns("x"), ANY, false).expectPeer(ANY, ns("x"), false));
            r.deletePolicies();
            r.validate(r.tcp(80));
        });
        add(CIDR_EGRESS, "x/a y/a y/b", r -> {
            r.policy("x", "allow-client-a-via-cidr-egress-rule", "{podSelector: {matchLabels: {pod: a}}, policyTypes: [Egress],"
                    + " egress: [{to: [{ipBlock: {cidr: '" + r.hostCidr("y/b") + "'}}]}]}");
            r.validate(r.tcp(80).expectAllEgress("x/a", false).expect("x/a", "y/b", true));
        });
        add(CIDR_EXCEPT, "x/a x/b x/c", r -> {
            r.policy("x", "allow-client-a-via-cidr-egress-rule", "{podSelector: {matchLabels: {pod: a}}, policyTypes: [Egress],"
                    + " egress: [{to: [{ipBlock: {cidr: '" + r.largeCidr("x/b") + "', except: ['" + r.hostCidr("x/b") + "']}}]}]}");
            r.validate(r.tcp(80).expect("x/a", "x/b", false));
        });
        add(CIDR_OVERLAP, "x/a x/b x/c", r -> {
            r.policy("x", "allow-client-a-via-cidr-egress-rule", "{podSelector: {matchLabels: {pod: a}}, policyTypes: [Egress],"
                    + " egress: [{to: [{ipBlock: {cidr: '" + r.largeCidr("x/b") + "', except: ['" + r.hostCidr("x/b") + "']}}]}]}");
            r.validate(r.tcp(80).expect("x/a", "x/b", false));
            r.policy("x", "allow-client-a-via-cidr-egress-rule", "{podSelector: {matchLabels: {pod: a}}, policyTypes: [Egress],"
                    + " egress: [{to: [{ipBlock: {cidr: '" + r.hostCidr("x/b") + "'}}]}]}");
            r.validate(r.tcp(80).expectAllEgress("x/a", false).expect("x/a", "x/b", true));
        });
        add("should enforce policies to check ingress and egress policies can be controlled independently based on PodSelector", "x/a x/b y/a", r -> {
            r.policy("x", "allow-egress-for-target", "{podSelector: {matchLabels: {pod: a}}, policyTypes: [Egress], egress: [{}]}");
            r.validate(r.tcp(80));
            r.policy("x", "deny-ingress-via-label-selector", "{podSelector: {matchLabels: {pod: a}}, policyTypes: [Ingress]}");
            r.validate(r.tcp(80).expectAllIngress("x/a", false));
        });
        add("should not mistakenly treat 'protocol: SCTP' as 'protocol: TCP', even if the plugin doesn't support SCTP", "x/a y/a", r -> {
            r.policy("x", "deny-ingress", "{podSelector: {}, policyTypes: [Ingress]}");
            r.policy("x", "allow-only-sctp-ingress-on-port-81", "{podSelector: {matchLabels: {pod: a}}, policyTypes: [Ingress],"
                    + " ingress: [{ports: [{port: 81, protocol: SCTP}]}]}");
            r.validate(r.tcp(81).expectPeer(ANY, ns("x"), false));
        });
        add("should properly isolate pods that are selected by a policy allowing SCTP, even if the plugin doesn't support SCTP", "x/a y/a", r -> {
            r.policy("x", "allow-only-sctp-ingress-on-port-80", "{podSelector: {matchLabels: {pod: a}}, policyTypes: [Ingress],"
                    + " ingress: [{ports: [{port: 80, protocol: SCTP}]}]}");
            r.validate(r.tcp(81).expectAllIngress("x/a", false));
        });
        add("should not allow access by TCP when a policy specifies only UDP", "x/a y/a", r -> {
            r.policy("x", "allow-only-udp-ingress-on-port-81", "{podSelector: {matchLabels: {pod: a}}, policyTypes: [Ingress],"
                    + " ingress: [{ports: [{port: 81, protocol: UDP}]}]}");
            r.validate(r.tcp(81).expectAllIngress("x/a", false));
        });
        add("should enforce policy to allow traffic based on NamespaceSelector with MatchLabels using default ns label", "x/a x/b y/a z/a", r -> {
            r.policy("x", "allow-client-a-via-ns-selector-for-immutable-ns-label", "{podSelector: {matchLabels: {pod: a}}, policyTypes: [Ingress],"
                    + " ingress: [{from: [{namespaceSelector: {matchLabels: {" + NS + ": y}}}]}]}");
            r.validate(r.tcp(80).expectPeer(ns("x"), pod("x/a"), false).expectPeer(ns("z"), pod("x/a"), false));
        });
        add("should enforce policy based on NamespaceSelector with MatchExpressions using default ns label", "x/a x/b y/a z/a", r -> {
            r.policy("x", "allow-ns-y-match-selector-for-immutable-ns-label", "{podSelector: {matchLabels: {pod: a}}, policyTypes: [Egress],"
                    + " egress: [{to: [{namespaceSelector: {matchExpressions: [{key: " + NS + ", operator: NotIn, values: [y]}]}}]}]}");
            r.validate(r.tcp(80).expectPeer(pod("x/a"), ns("y"), false));
        });
        add(UDP_DEFAULT_DENY_INGRESS, "x/a x/b y/a y/b", r -> {
            r.policy("x", "deny-all", "{podSelector: {}, policyTypes: [Ingress]}");
            r.validate(r.udp(80).expectPeer(ANY, ns("x"), false));
        });
        add(UDP_PORTS, "x/a x/b y/a z/a", r -> {
            r.policy("x", "allow-ingress-on-port-81-ns-x", "{podSelector: {matchLabels: {pod: a}}, policyTypes: [Ingress],"
                    + " ingress: [{from: [{namespaceSelector: {matchLabels: {" + NS + ": y}}}], ports: [{port: 81, protocol: UDP}]}]}");
            r.validate(r.udp(81).expectPeer(ns("x"), pod("x/a"), false).expectPeer(ns("z"), pod("x/a"), false));
        });
        add("UDP: should enforce policy to allow traffic only from a pod in a different namespace based on PodSelector and NamespaceSelector",
                "x/a x/b y/a", r -> {
                    r.policy("x", "allow-ns-y-pod-a-via-namespace-pod-selector", "{podSelector: {matchLabels: {pod: a}}, policyTypes: [Ingress],"
                            + " ingress: [{from: [{namespaceSelector: {matchLabels: {" + NS + ": y}}, podSelector: {matchLabels: {pod: a}}}]}]}");
                    r.validate(r.udp(80).expectAllIngress("x/a", false).expect("y/a", "x/a", true));
                });
        // past upstream's file: the expectations are ours, written out by hand like upstream's
        add("[jflannel] endPort: a port range takes both its ends, on its protocol only", "x/a x/b y/a z/a", r -> {
            r.policy("x", "allow-80-to-81-from-y", "{podSelector: {matchLabels: {pod: a}}, policyTypes: [Ingress],"
                    + " ingress: [{from: [{namespaceSelector: {matchLabels: {ns: y}}}], ports: [{protocol: TCP, port: 80, endPort: 81}]}]}");
            r.validate(r.tcp(80).expectAllIngress("x/a", false).expectPeer(ns("y"), pod("x/a"), true),
                    r.tcp(81).expectAllIngress("x/a", false).expectPeer(ns("y"), pod("x/a"), true),
                    r.udp(80).expectAllIngress("x/a", false), r.udp(81).expectAllIngress("x/a", false));
        });
        add("[jflannel] default-deny egress but a DNS-style UDP port to one namespace", "x/a x/b y/a z/a", r -> {
            r.policy("x", "deny-egress", "{podSelector: {}, policyTypes: [Egress]}");
            r.policy("x", "allow-dns-style", "{podSelector: {}, policyTypes: [Egress],"
                    + " egress: [{to: [{namespaceSelector: {matchLabels: {ns: z}}}], ports: [{protocol: UDP, port: 81}]}]}");
            r.validate(r.udp(81).expectPeer(ns("x"), ANY, false).expectPeer(ns("x"), ns("z"), true),
                    r.udp(80).expectPeer(ns("x"), ANY, false), r.tcp(81).expectPeer(ns("x"), ANY, false),
                    r.tcp(80).expectPeer(ns("x"), ANY, false));
        });
    }
}
